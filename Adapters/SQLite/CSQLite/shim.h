// The system's SQLite C library (Debian: libsqlite3-dev; Apple platforms: the SDK).
#include <sqlite3.h>

// sqlite3_db_config is variadic, which Swift cannot call: keeps the write-ahead log as it is when
// the connection closes (no checkpoint into the database, no removal of the log).
static inline int modelstore_keep_wal_on_close(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}

// Turns off SQLite's reading of a double-quoted name that names no column as a string literal, so a
// statement naming a column the file does not have fails instead of reading the name as text.
static inline void modelstore_strict_quotes(sqlite3 *db) {
    sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, (int *)0);
    sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 0, (int *)0);
}
