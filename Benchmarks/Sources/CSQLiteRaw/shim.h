// The system's SQLite C library (Debian: libsqlite3-dev), for the `sqlite-raw` baselines: the
// engine the SQLite adapter runs on, called directly.
#include <sqlite3.h>
