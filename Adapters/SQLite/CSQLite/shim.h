// The system's SQLite C library (Debian: libsqlite3-dev; Apple platforms: the SDK).
#include <sqlite3.h>
