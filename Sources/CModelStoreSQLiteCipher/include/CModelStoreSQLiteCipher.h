// A VFS shim over SQLite's default VFS that seals every page of a database, of its write-ahead log
// and of its rollback journal with AES-256-GCM (OpenSSL libcrypto), keeping each page's 12-byte
// nonce and 16-byte tag in the page's reserved bytes. The layout is described in
// Adapters/SQLite/FORMAT.md ("Encrypted files").
#ifndef MODELSTORE_SQLITE_CIPHER_H
#define MODELSTORE_SQLITE_CIPHER_H

#include <stdint.h>

// The name of the VFS, for `vfs=` in a `file:` URI.
#define MODELSTORE_CIPHER_VFS "modelstore-cipher"
// The URI parameter naming a key registered with `modelstore_cipher_key_add`.
#define MODELSTORE_CIPHER_KEY_PARAMETER "modelstore-key"
// The bytes every page reserves: the nonce, then the tag.
#define MODELSTORE_CIPHER_RESERVE 28
// The bytes at the start of an encrypted file that hold its salt instead of SQLite's magic string.
#define MODELSTORE_CIPHER_SALT 16
// The result code a read returns for a page that fails authentication (SQLITE_IOERR_AUTH).
enum { modelstore_cipher_auth_failed = 10 | (28 << 8) };

// Registers the VFS (once; later calls do nothing). Returns SQLITE_OK or SQLite's error.
int modelstore_cipher_register(void);

// Keeps a copy of the 32-byte `key` and the 16-byte `salt` of the file it opens, and returns the
// number that names them in the URI parameter, or -1 when out of memory.
int modelstore_cipher_key_add(const uint8_t *key, const uint8_t *salt);

// Wipes and forgets the key numbered `identifier`; files opened with it keep their own copies.
void modelstore_cipher_key_remove(int identifier);

// What the first bytes of a file say it is.
enum {
    modelstore_cipher_file_missing = 0,
    modelstore_cipher_file_empty = 1,
    modelstore_cipher_file_plaintext = 2,
    modelstore_cipher_file_encrypted = 3,
    modelstore_cipher_file_unknown = 4,
};

// Reads the start of the file at `path` and says what it is; for an encrypted file, copies its salt
// to `salt` (16 bytes).
int modelstore_cipher_classify(const char *path, uint8_t *salt);

// What a key does to an encrypted file's pages.
enum {
    modelstore_cipher_key_opens = 0,
    modelstore_cipher_key_wrong = 1,
    modelstore_cipher_key_page_damaged = 2,
    modelstore_cipher_key_unreadable = 3,
};

// Tries `key` on the first page of the encrypted file at `path` (and, when that fails, on its
// second, which tells a damaged first page from a wrong key).
int modelstore_cipher_check_key(const char *path, const uint8_t *key, const uint8_t *salt);

// `modelstore_cipher_check_key` with the key numbered `identifier` and its salt. When the key opens the
// first page, the key keeps that page (sealed and opened, wiped with the key), and the database files
// opened with the key give it to SQLite while the file holds the same sealed bytes, instead of opening
// it again.
int modelstore_cipher_check_registered_key(const char *path, int identifier);

// The offset of damage in the sealed write-ahead log `log` (`length` bytes) of a database opened with the
// key `identifier`: the first frame that fails authentication or SQLite's checksum chain, when frames of
// the log's generation follow it (committed transactions SQLite's recovery would drop). -1 when none is
// seen, 0 for a log whose header is bad, -2 when the key is unknown or memory runs out.
int64_t modelstore_cipher_wal_damage(int identifier, const uint8_t *log, int64_t length);

#endif
