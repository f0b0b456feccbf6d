// See CModelStoreSQLiteRows.h. The bytes a value adds to the checksum: its storage class (one byte),
// then an integer's or a real's 8 bytes (little endian), or text's or a blob's length (4 bytes,
// little endian) and its bytes, or nothing for NULL. Small pieces gather in a buffer so that a row
// costs one or two calls of the update function, not three per column.
#include "CModelStoreSQLiteRows.h"

#include <string.h>

enum { buffer_size = 512 };

typedef struct {
    uint8_t bytes[buffer_size];
    size_t used;
    uint32_t crc;
    modelstore_crc_update update;
} checksum_state;

static void flush(checksum_state *state) {
    if (state->used > 0) {
        state->crc = state->update(state->crc, state->bytes, state->used);
        state->used = 0;
    }
}

static void add_raw(checksum_state *state, const void *bytes, size_t count) {
    if (count > buffer_size - state->used) {
        flush(state);
        if (count > buffer_size) {
            state->crc = state->update(state->crc, bytes, count);
            return;
        }
    }
    memcpy(state->bytes + state->used, bytes, count);
    state->used += count;
}

static void add_type(checksum_state *state, int type) {
    if (state->used == buffer_size) flush(state);
    state->bytes[state->used++] = (uint8_t)type;
}

static void add_word(checksum_state *state, uint64_t word) {
    uint8_t little[8];
    for (int index = 0; index < 8; index++) little[index] = (uint8_t)(word >> (8 * index));
    add_raw(state, little, 8);
}

static void add_bytes(checksum_state *state, const void *bytes, int length) {
    uint32_t count = (uint32_t)length;
    uint8_t little[4] = {(uint8_t)count, (uint8_t)(count >> 8), (uint8_t)(count >> 16), (uint8_t)(count >> 24)};
    add_raw(state, little, 4);
    if (bytes != NULL && length > 0) add_raw(state, bytes, (size_t)length);
}

static uint64_t bits_of(double value) {
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

// One column through sqlite3_column_value, whose value functions skip the checks and the mutex that
// each sqlite3_column_* function takes. SQLite calls that value unprotected (no mutex held) and says
// the distinction vanishes on a connection without mutexes: the adapter opens every connection with
// SQLITE_OPEN_NOMUTEX and lets one thread at a time use it.
static void read_column(sqlite3_stmt *statement, int index, modelstore_sqlite_column *column) {
    sqlite3_value *value = sqlite3_column_value(statement, index);
    column->type = sqlite3_value_type(value);
    column->length = 0;
    column->integer = 0;
    column->real = 0;
    column->bytes = NULL;
    switch (column->type) {
    case SQLITE_INTEGER: column->integer = sqlite3_value_int64(value); break;
    case SQLITE_FLOAT: column->real = sqlite3_value_double(value); break;
    case SQLITE_TEXT:
        column->bytes = sqlite3_value_text(value);
        column->length = sqlite3_value_bytes(value);
        break;
    case SQLITE_BLOB:
        column->bytes = sqlite3_value_blob(value);
        column->length = sqlite3_value_bytes(value);
        break;
    default: break;
    }
}

static void add_column(checksum_state *state, const modelstore_sqlite_column *column) {
    add_type(state, column->type);
    switch (column->type) {
    case SQLITE_INTEGER: add_word(state, (uint64_t)column->integer); break;
    case SQLITE_FLOAT: add_word(state, bits_of(column->real)); break;
    case SQLITE_TEXT:
    case SQLITE_BLOB: add_bytes(state, column->bytes, column->length); break;
    default: break;
    }
}

uint32_t modelstore_sqlite_row_checksum(
    sqlite3_stmt *statement, int first, int count, modelstore_sqlite_column *columns,
    modelstore_crc_update update) {
    checksum_state state;
    state.used = 0;
    state.crc = 0;
    state.update = update;
    modelstore_sqlite_column scratch;
    for (int offset = 0; offset < count; offset++) {
        modelstore_sqlite_column *column = columns != NULL ? &columns[offset] : &scratch;
        read_column(statement, first + offset, column);
        add_column(&state, column);
    }
    if (columns != NULL) read_column(statement, first + count, &columns[count]);
    flush(&state);
    return state.crc;
}

void modelstore_sqlite_row_checksum_function(sqlite3_context *context, int count, sqlite3_value **arguments) {
    if (arguments == NULL || count < 1) {
        sqlite3_result_null(context);
        return;
    }
    checksum_state state;
    state.used = 0;
    state.crc = (uint32_t)sqlite3_value_int64(arguments[0]);
    state.update = (modelstore_crc_update)sqlite3_user_data(context);
    for (int index = 1; index < count; index++) {
        sqlite3_value *value = arguments[index];
        modelstore_sqlite_column column = {sqlite3_value_type(value), 0, 0, 0, NULL};
        switch (column.type) {
        case SQLITE_INTEGER: column.integer = sqlite3_value_int64(value); break;
        case SQLITE_FLOAT: column.real = sqlite3_value_double(value); break;
        case SQLITE_TEXT:
            column.bytes = sqlite3_value_text(value);
            column.length = sqlite3_value_bytes(value);
            break;
        case SQLITE_BLOB:
            column.bytes = sqlite3_value_blob(value);
            column.length = sqlite3_value_bytes(value);
            break;
        default: break;
        }
        add_column(&state, &column);
    }
    flush(&state);
    sqlite3_result_int64(context, (sqlite3_int64)state.crc);
}
