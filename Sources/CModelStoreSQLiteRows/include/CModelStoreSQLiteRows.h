// Reading a row of a ModelStore SQLite table in one call: each column's storage class and value,
// and the CRC-32C of the values (the row checksum described in Adapters/SQLite/FORMAT.md), so the
// adapter asks SQLite for each column once instead of once for the checksum and again to decode.
#ifndef MODELSTORE_SQLITE_ROWS_H
#define MODELSTORE_SQLITE_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

// Extends the CRC-32C `crc` of earlier bytes with `count` more (pre- and post-inverted, so that
// update(update(c, a), b) == update(c, a followed by b)).
typedef uint32_t (*modelstore_crc_update)(uint32_t crc, const void *bytes, size_t count);

// One column of the current row, as SQLite keeps it. `bytes` and `length` are set for text and
// blobs and stay valid until the statement steps, resets or is finalized.
typedef struct {
    int32_t type;        // SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB or SQLITE_NULL
    int32_t length;      // the bytes of text or a blob; 0 otherwise
    int64_t integer;     // an integer's value
    double real;         // a real's value
    const void *bytes;   // text (UTF-8, not terminated) or a blob; NULL when empty or not either
} modelstore_sqlite_column;

// The row checksum of columns `first ..< first + count` of the statement's current row. With
// `columns`, also stores each of those columns (columns[0] is column `first`) and, in
// columns[count], column `first + count` (where a table keeps its stored checksum).
uint32_t modelstore_sqlite_row_checksum(
    sqlite3_stmt *statement, int first, int count, modelstore_sqlite_column *columns,
    modelstore_crc_update update);

// The row checksum as an SQL function: `modelstore_crc(previous, a, b, ...)` is the checksum of
// `a, b, ...` continuing from `previous`. Register it with the update function as its user data.
void modelstore_sqlite_row_checksum_function(sqlite3_context *context, int count, sqlite3_value **arguments);

#endif
