// The page cipher VFS (see include/CModelStoreSQLiteCipher.h and Adapters/SQLite/FORMAT.md).
//
// Every page image that reaches the disk (in the database, in a write-ahead log frame, in a
// rollback journal record) is sealed the same way: the last 28 bytes are the page's reserved
// bytes, holding a random 12-byte nonce and the 16-byte GCM tag; everything before them is
// encrypted, except on page 1, whose first 16 bytes hold the file's salt (SQLite's constant magic
// string is put back on reading) and whose bytes 16-23 (page size, format versions, reserved-byte
// count, payload fractions) stay in the clear, so that the page size is known before page 1 is
// decrypted. The associated data is the page number, the file's salt and, on page 1, bytes 16-23:
// a page cannot be moved to another place, into another file, or given another header.
#include "CModelStoreSQLiteCipher.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NONCE 12
#define TAG 16
#define RESERVE MODELSTORE_CIPHER_RESERVE
#define SALT MODELSTORE_CIPHER_SALT
#define CLEAR_HEADER 24
#define WAL_HEADER 32
#define FRAME_HEADER 24

static const uint8_t sqlite_magic[16] = "SQLite format 3";
static const uint8_t journal_magic[8] = {0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7};

// MARK: Keys

typedef struct {
    int used;
    uint8_t key[32];
    uint8_t salt[SALT];
    // Page 1 of the key's file as `modelstore_cipher_check_registered_key` opened it: its sealed image,
    // then its plaintext (`page_one_size` bytes each), which a database file opened with the key starts
    // from (see `open_first_page`). Wiped with the key.
    uint8_t *page_one;
    int page_one_size;
} key_slot;

static pthread_mutex_t keys_lock = PTHREAD_MUTEX_INITIALIZER;
static key_slot *keys = NULL;
static int key_count = 0;

int modelstore_cipher_key_add(const uint8_t *key, const uint8_t *salt) {
    pthread_mutex_lock(&keys_lock);
    int found = -1;
    for (int index = 0; index < key_count; index++) {
        if (!keys[index].used) {
            found = index;
            break;
        }
    }
    if (found < 0) {
        int count = key_count == 0 ? 16 : key_count * 2;
        key_slot *grown = calloc((size_t)count, sizeof(key_slot));
        if (grown == NULL) {
            pthread_mutex_unlock(&keys_lock);
            return -1;
        }
        if (keys != NULL) {
            memcpy(grown, keys, sizeof(key_slot) * (size_t)key_count);
            OPENSSL_cleanse(keys, sizeof(key_slot) * (size_t)key_count);
            free(keys);
        }
        found = key_count;
        keys = grown;
        key_count = count;
    }
    keys[found].used = 1;
    memcpy(keys[found].key, key, 32);
    memcpy(keys[found].salt, salt, SALT);
    pthread_mutex_unlock(&keys_lock);
    return found;
}

// Wipes and frees the page 1 a key slot keeps (its plaintext: the sealed image is what the file holds).
// Called with `keys_lock` held.
static void slot_forget_page_one(key_slot *slot) {
    if (slot->page_one != NULL) {
        OPENSSL_cleanse(slot->page_one + slot->page_one_size, (size_t)slot->page_one_size);
        free(slot->page_one);
    }
    slot->page_one = NULL;
    slot->page_one_size = 0;
}

void modelstore_cipher_key_remove(int identifier) {
    pthread_mutex_lock(&keys_lock);
    if (identifier >= 0 && identifier < key_count) {
        slot_forget_page_one(&keys[identifier]);
        OPENSSL_cleanse(&keys[identifier], sizeof(key_slot));
    }
    pthread_mutex_unlock(&keys_lock);
}

static int key_copy(int identifier, uint8_t *key, uint8_t *salt) {
    int ok = 0;
    pthread_mutex_lock(&keys_lock);
    if (identifier >= 0 && identifier < key_count && keys[identifier].used) {
        memcpy(key, keys[identifier].key, 32);
        memcpy(salt, keys[identifier].salt, SALT);
        ok = 1;
    }
    pthread_mutex_unlock(&keys_lock);
    return ok;
}

// MARK: Sealing pages

typedef struct {
    // The contexts, each made (and its key schedule set) on its first use, then kept for the file's life:
    // a page then costs only setting the nonce. A file that is only read never makes `seal`, and only a
    // log needs `mask`.
    EVP_CIPHER_CTX *seal;
    EVP_CIPHER_CTX *open;
    // AES-256 under a key derived from the file's key, for the masks of log frame checksums.
    EVP_CIPHER_CTX *mask;
    // The file's key, for the contexts not made yet (the key list keeps it too, and an AES-256 key
    // schedule begins with the key, so this copy exposes nothing the contexts do not).
    uint8_t key[32];
    uint8_t salt[SALT];
    // The last nonce this file sealed with: random when the file seals its first page, then its last
    // 8 bytes counted up by one per page (see `next_nonce`).
    uint8_t nonce[NONCE];
    int has_nonce;
} page_cipher;

// The two blocks whose encryption under the file's key is the key of the checksum masks; a GCM counter
// block equals one only if a random nonce equals its first 12 bytes.
static const uint8_t mask_key_blocks[32] = "ModelStore WAL mModelStore WAL n";

// The ciphers fetched from OpenSSL's default provider once per process: `EVP_aes_256_gcm()` alone
// makes every context's key setup look the algorithm up again, a good part of what opening a file
// through the cipher costs. They are kept for the life of the process; if a fetch fails, the
// built-in ones are used.
static EVP_CIPHER *fetched_gcm = NULL, *fetched_ecb = NULL;
static pthread_once_t fetching = PTHREAD_ONCE_INIT;

static void fetch_ciphers(void) {
    fetched_gcm = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
    fetched_ecb = EVP_CIPHER_fetch(NULL, "AES-256-ECB", NULL);
}

static const EVP_CIPHER *aes_gcm(void) {
    pthread_once(&fetching, fetch_ciphers);
    return fetched_gcm != NULL ? fetched_gcm : EVP_aes_256_gcm();
}

static const EVP_CIPHER *aes_ecb(void) {
    pthread_once(&fetching, fetch_ciphers);
    return fetched_ecb != NULL ? fetched_ecb : EVP_aes_256_ecb();
}

static int cipher_init(page_cipher *cipher, const uint8_t *key, const uint8_t *salt) {
    memcpy(cipher->key, key, 32);
    memcpy(cipher->salt, salt, SALT);
    cipher->seal = cipher->open = cipher->mask = NULL;
    return 1;
}

// The GCM context in `*kept` (sealing pages when `encrypt` is 1, opening them when 0), made on the first
// call; NULL when out of memory.
static EVP_CIPHER_CTX *gcm_context(page_cipher *cipher, EVP_CIPHER_CTX **kept, int encrypt) {
    if (*kept != NULL) return *kept;
    EVP_CIPHER_CTX *context = EVP_CIPHER_CTX_new();
    if (context == NULL || EVP_CipherInit_ex(context, aes_gcm(), NULL, cipher->key, NULL, encrypt) != 1) {
        EVP_CIPHER_CTX_free(context);
        return NULL;
    }
    return *kept = context;
}

static EVP_CIPHER_CTX *seal_context(page_cipher *cipher) { return gcm_context(cipher, &cipher->seal, 1); }
static EVP_CIPHER_CTX *open_context(page_cipher *cipher) { return gcm_context(cipher, &cipher->open, 0); }

// The context that makes checksum masks (AES-256 under the encryption of `mask_key_blocks` with the
// file's key), made on the first call; NULL when out of memory.
static EVP_CIPHER_CTX *mask_context(page_cipher *cipher) {
    if (cipher->mask != NULL) return cipher->mask;
    EVP_CIPHER_CTX *context = EVP_CIPHER_CTX_new();
    uint8_t mask_key[32];
    int written = 0;
    int ok = context != NULL && EVP_EncryptInit_ex(context, aes_ecb(), NULL, cipher->key, NULL) == 1;
    ok = ok && EVP_CIPHER_CTX_set_padding(context, 0) == 1;
    ok = ok && EVP_EncryptUpdate(context, mask_key, &written, mask_key_blocks, 32) == 1 && written == 32;
    ok = ok && EVP_EncryptInit_ex(context, aes_ecb(), NULL, mask_key, NULL) == 1;
    ok = ok && EVP_CIPHER_CTX_set_padding(context, 0) == 1;
    OPENSSL_cleanse(mask_key, sizeof mask_key);
    if (!ok) {
        EVP_CIPHER_CTX_free(context);
        return NULL;
    }
    return cipher->mask = context;
}

static void cipher_free(page_cipher *cipher) {
    EVP_CIPHER_CTX_free(cipher->seal);
    EVP_CIPHER_CTX_free(cipher->open);
    EVP_CIPHER_CTX_free(cipher->mask);
    cipher->seal = cipher->open = cipher->mask = NULL;
    OPENSSL_cleanse(cipher->key, sizeof cipher->key);
    OPENSSL_cleanse(cipher->salt, SALT);
}

// The associated data of page `number`: its number, the file's salt and, on page 1, bytes 16-23.
static int associated_data(const page_cipher *cipher, uint32_t number, const uint8_t *page, uint8_t *out) {
    out[0] = (uint8_t)(number >> 24);
    out[1] = (uint8_t)(number >> 16);
    out[2] = (uint8_t)(number >> 8);
    out[3] = (uint8_t)number;
    memcpy(out + 4, cipher->salt, SALT);
    if (number != 1) return 4 + SALT;
    memcpy(out + 4 + SALT, page + SALT, CLEAR_HEADER - SALT);
    return 4 + CLEAR_HEADER;
}

// Writes the next nonce to `nonce`. A file's first is 12 random bytes; each next one adds 1 to its last 8
// bytes (as a big-endian number), so a page write costs no call to the random generator.
//
// Why no nonce seals two different pages under one key. Every open file (the database, its log, its
// journal, in every connection of every process, and again each time it is opened) has its own
// `page_cipher` and draws its own 96-bit start from OpenSSL's generator when it seals its first page (a
// connection is never carried into a forked child: SQLite forbids it, and the child would count on from
// its parent's nonce).
// Within one file the nonces are a run of consecutive counter values, which repeats only after 2^64 pages.
// Two files' runs share a nonce only if their first 4 bytes are equal (chance 2^-32) and their counters,
// n and m pages long, overlap (chance at most (n + m) / 2^64): at most (n + m) / 2^96. Over h opened files
// of at most n pages each, the chance that any nonce repeats is at most h^2 * n / 2^96, below the
// h^2 * n^2 / 2^97 of a fresh random nonce per page (e.g. 2^-32 for a million opens of 16 million pages
// each). No file, log or process needs to know another's nonces, so none is shared or written down. A
// page a checkpoint carries from the log into the database keeps its nonce, but it is the same sealed
// image (same page, plaintext and associated data), not a second message under that nonce.
static int next_nonce(page_cipher *cipher, uint8_t *nonce) {
    if (!cipher->has_nonce) {
        if (RAND_bytes(cipher->nonce, NONCE) != 1) return 0;
        cipher->has_nonce = 1;
    } else {
        for (int index = NONCE - 1; index >= NONCE - 8; index--) {
            if (++cipher->nonce[index] != 0) break;
        }
    }
    memcpy(nonce, cipher->nonce, NONCE);
    return 1;
}

// Seals the page image `plain` of `size` bytes, page `number`, into `sealed` (another buffer).
static int seal_page(page_cipher *cipher, uint32_t number, const uint8_t *plain, uint8_t *sealed, int size) {
    int start = number == 1 ? CLEAR_HEADER : 0;
    int length = size - RESERVE - start;
    uint8_t aad[4 + CLEAR_HEADER];
    uint8_t *nonce = sealed + size - RESERVE, *tag = nonce + NONCE;
    if (length <= 0) return 0;
    if (number == 1) {
        // The reserved-byte count SQLite records must leave room for the nonce and the tag.
        if (plain[20] < RESERVE) return 0;
        memcpy(sealed, cipher->salt, SALT);
        memcpy(sealed + SALT, plain + SALT, CLEAR_HEADER - SALT);
    }
    if (!next_nonce(cipher, nonce)) return 0;
    int aad_length = associated_data(cipher, number, sealed, aad), written = 0;
    EVP_CIPHER_CTX *context = seal_context(cipher);
    int ok = context != NULL && EVP_EncryptInit_ex(context, NULL, NULL, NULL, nonce) == 1;
    ok = ok && EVP_EncryptUpdate(context, NULL, &written, aad, aad_length) == 1;
    ok = ok && EVP_EncryptUpdate(context, sealed + start, &written, plain + start, length) == 1;
    ok = ok && EVP_EncryptFinal_ex(context, sealed + start + written, &written) == 1;
    ok = ok && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, TAG, tag) == 1;
    return ok;
}

// Opens the sealed page image `sealed` of page `number` into `plain` (another buffer, or `sealed`
// itself); returns 0 when it fails authentication. GCM decrypts before it checks the tag, so a failed
// page's bytes in `plain` are wiped: no plaintext that failed authentication stays in SQLite's buffer
// or in the file's own.
static int open_page(page_cipher *cipher, uint32_t number, const uint8_t *sealed, uint8_t *plain, int size) {
    int start = number == 1 ? CLEAR_HEADER : 0;
    int length = size - RESERVE - start;
    uint8_t aad[4 + CLEAR_HEADER], tag[TAG];
    const uint8_t *nonce = sealed + size - RESERVE;
    if (length <= 0) return 0;
    if (number == 1 && CRYPTO_memcmp(sealed, cipher->salt, SALT) != 0) return 0;
    memcpy(tag, nonce + NONCE, TAG);
    int aad_length = associated_data(cipher, number, sealed, aad), written = 0;
    EVP_CIPHER_CTX *context = open_context(cipher);
    int ok = context != NULL && EVP_DecryptInit_ex(context, NULL, NULL, NULL, nonce) == 1;
    ok = ok && EVP_DecryptUpdate(context, NULL, &written, aad, aad_length) == 1;
    ok = ok && EVP_DecryptUpdate(context, plain + start, &written, sealed + start, length) == 1;
    ok = ok && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, TAG, tag) == 1;
    ok = ok && EVP_DecryptFinal_ex(context, plain + start + written, &written) == 1;
    if (!ok) {
        OPENSSL_cleanse(plain + start, (size_t)length);
        return 0;
    }
    if (number == 1) {
        memcpy(plain, sqlite_magic, SALT);
        memcpy(plain + SALT, sealed + SALT, CLEAR_HEADER - SALT);
    }
    memset(plain + size - RESERVE, 0, RESERVE);
    return 1;
}

static uint32_t big_endian(const uint8_t *bytes) {
    return ((uint32_t)bytes[0] << 24) | ((uint32_t)bytes[1] << 16) | ((uint32_t)bytes[2] << 8) | bytes[3];
}

// Masks (or unmasks) the checksum in bytes 16-23 of the log frame header `header` at `offset`: XORs them
// with the encryption of the header's salts and the offset under the mask key. SQLite computes the
// checksum over the plaintext, so in the clear it would let someone test a guess of a page. Salts
// change whenever the log restarts, so a mask is reused only when SQLite rewrites a frame's checksum.
static int mask_checksum(page_cipher *cipher, uint8_t *header, sqlite3_int64 offset) {
    uint8_t block[16], mask[16];
    int written = 0;
    memcpy(block, header + 8, 8);
    for (int index = 0; index < 8; index++) block[8 + index] = (uint8_t)((uint64_t)offset >> (56 - 8 * index));
    EVP_CIPHER_CTX *context = mask_context(cipher);
    if (context == NULL || EVP_EncryptUpdate(context, mask, &written, block, 16) != 1 || written != 16) return 0;
    for (int index = 0; index < 8; index++) header[16 + index] ^= mask[index];
    return 1;
}

// The page size bytes 16-17 of a database header give, or 0 if they give none.
static int header_page_size(const uint8_t *header) {
    int size = (header[16] << 8) | header[17];
    if (size == 1) size = 65536;
    if (size < 512 || size > 65536 || (size & (size - 1)) != 0) return 0;
    return size;
}

// MARK: Files

enum { kind_plain, kind_database, kind_wal, kind_journal };

typedef struct cipher_file cipher_file;

struct cipher_file {
    sqlite3_file base;
    sqlite3_file *real;
    int kind;
    page_cipher cipher;
    // The key's identifier in the process's key list (the `MODELSTORE_CIPHER_KEY_PARAMETER` of the name).
    int key_identifier;
    // The log: its database file, when that is sealed under the same key (see `carry_page`).
    cipher_file *database;
    // The database: whether its connection is between a checkpoint's start and end (SQLite's
    // `SQLITE_FCNTL_CKPT_START` and `SQLITE_FCNTL_CKPT_DONE`), and the one page the checkpoint has read
    // from the log and not yet written, as sealed there (`carried_size` bytes of page `carried_page`;
    // see `carry_page`).
    int checkpointing;
    uint8_t *carried;
    int carried_capacity;
    int carried_size;
    uint32_t carried_page;
    // The page size: of the database (read from its header), or of the log (from its header).
    int page_size;
    // A page-sized buffer (two, for the log's frame reads: header and page).
    uint8_t *buffer;
    int buffer_size;
    // The database: page 1 as last opened, its sealed image then its plaintext (`page_one_size` bytes each,
    // 0 when none is kept; see `open_first_page`).
    uint8_t *page_one;
    int page_one_capacity;
    int page_one_size;
    // The log: where the last frame header was written and the page number it holds.
    sqlite3_int64 frame_header_offset;
    uint32_t frame_page;
    // The journal: where the last 4-byte word was read or written, and its value.
    sqlite3_int64 word_offset;
    uint32_t word;
};

static sqlite3_vfs cipher_vfs;
static sqlite3_io_methods cipher_methods;

static int ensure_buffer(cipher_file *file, int size) {
    if (file->buffer_size >= size) return 1;
    uint8_t *grown = sqlite3_realloc(file->buffer, size);
    if (grown == NULL) return 0;
    file->buffer = grown;
    file->buffer_size = size;
    return 1;
}

static int real_read(cipher_file *file, void *out, int amount, sqlite3_int64 offset) {
    return file->real->pMethods->xRead(file->real, out, amount, offset);
}

static int real_write(cipher_file *file, const void *data, int amount, sqlite3_int64 offset) {
    return file->real->pMethods->xWrite(file->real, data, amount, offset);
}

// MARK: The database file

static int database_page_size(cipher_file *file) {
    if (file->page_size == 0) {
        uint8_t header[CLEAR_HEADER];
        int rc = real_read(file, header, CLEAR_HEADER, 0);
        if (rc != SQLITE_OK) return rc;
        file->page_size = header_page_size(header);
        if (file->page_size == 0) return SQLITE_NOTADB;
    }
    return SQLITE_OK;
}

// Opens page 1's sealed image `sealed` into `plain` (`sealed` itself, or another buffer), as `open_page`
// does. SQLite reads page 1 three times as it opens a database (its first 100 bytes, then the whole page
// twice) and, outside WAL mode, its change counter as every transaction starts; each read of a part is a
// read of the whole sealed page here. The page is opened once and kept, with the sealed image it was
// opened from, and a read whose sealed bytes are that image, byte for byte, is given the kept plaintext.
// Those bytes authenticated as page 1 under this file's key and salt, so they still do; any other bytes
// (a changed or damaged page) are opened and authenticated anew.
static int open_first_page(cipher_file *file, const uint8_t *sealed, uint8_t *plain, int size) {
    if (file->page_one_size == size && memcmp(file->page_one, sealed, (size_t)size) == 0) {
        memcpy(plain, file->page_one + size, (size_t)size);
        return 1;
    }
    file->page_one_size = 0;
    // Exactly two pages, so that the plaintext is always the second half (see `cipher_close`).
    if (file->page_one_capacity != 2 * size) {
        uint8_t *grown = sqlite3_malloc(2 * size);
        // Without the memory the page is opened as any other, and not kept.
        if (grown == NULL) return open_page(&file->cipher, 1, sealed, plain, size);
        if (file->page_one != NULL) {
            OPENSSL_cleanse(file->page_one, (size_t)file->page_one_capacity);
            sqlite3_free(file->page_one);
        }
        file->page_one = grown;
        file->page_one_capacity = 2 * size;
    }
    // The sealed image is kept first: `plain` may be `sealed`.
    memcpy(file->page_one, sealed, (size_t)size);
    if (!open_page(&file->cipher, 1, file->page_one, plain, size)) return 0;
    memcpy(file->page_one + size, plain, (size_t)size);
    file->page_one_size = size;
    return 1;
}

// Opens page `number` of the database `file` (see `open_page` and `open_first_page`).
static int open_database_page(cipher_file *file, uint32_t number, const uint8_t *sealed, uint8_t *plain, int size) {
    return number == 1 ? open_first_page(file, sealed, plain, size) : open_page(&file->cipher, number, sealed, plain, size);
}

static int database_read(cipher_file *file, void *out, int amount, sqlite3_int64 offset) {
    // Made before a page is read, so that running out of memory is not taken for a page that fails.
    if (open_context(&file->cipher) == NULL) return SQLITE_IOERR_NOMEM;
    int rc = database_page_size(file);
    if (rc == SQLITE_IOERR_SHORT_READ) {
        memset(out, 0, (size_t)amount);
        return rc;
    }
    if (rc != SQLITE_OK) return rc;
    int size = file->page_size;
    sqlite3_int64 start = offset - offset % size;
    if (offset + amount > start + size) return SQLITE_IOERR_READ;
    uint32_t number = (uint32_t)(start / size) + 1;
    if (offset == start && amount == size) {
        // A whole page, the usual read: opened where it is read (a page that fails is an error anyway).
        rc = real_read(file, out, size, start);
        // Past the end of the file a page reads as zeros, as SQLite's own VFS gives it.
        if (rc == SQLITE_IOERR_SHORT_READ) memset(out, 0, (size_t)amount);
        if (rc != SQLITE_OK) return rc;
        return open_database_page(file, number, out, out, size) ? SQLITE_OK : modelstore_cipher_auth_failed;
    }
    if (!ensure_buffer(file, 2 * size)) return SQLITE_IOERR_NOMEM;
    uint8_t *sealed = file->buffer, *plain = file->buffer + size;
    rc = real_read(file, sealed, size, start);
    if (rc == SQLITE_IOERR_SHORT_READ) {
        memset(out, 0, (size_t)amount);
        return rc;
    }
    if (rc != SQLITE_OK) return rc;
    if (!open_database_page(file, number, sealed, plain, size)) return modelstore_cipher_auth_failed;
    memcpy(out, plain + (offset - start), (size_t)amount);
    return SQLITE_OK;
}

static int database_write(cipher_file *file, const void *data, int amount, sqlite3_int64 offset) {
    // SQLite writes the database a whole page at a time, at the page's offset.
    if (amount < 512 || (amount & (amount - 1)) != 0 || offset % amount != 0) return SQLITE_IOERR_WRITE;
    if (!ensure_buffer(file, amount)) return SQLITE_IOERR_NOMEM;
    uint32_t number = (uint32_t)(offset / amount) + 1;
    file->page_size = amount;
    int carried = file->carried_size;
    file->carried_size = 0;
    if (carried == amount && file->carried_page == number && memcmp(file->carried, data, (size_t)amount) == 0) {
        // A checkpoint copying a page from the log: the bytes are the page's sealed image there, a sealing
        // for this page number under this key and salt, so they are written as they are.
        return real_write(file, data, amount, offset);
    }
    if (!seal_page(&file->cipher, number, data, file->buffer, amount)) return SQLITE_IOERR_WRITE;
    return real_write(file, file->buffer, amount, offset);
}

// Keeps the sealed image of page `number`, as the log `file` holds it, in its database file while a
// checkpoint runs (see `cipher_file.carried`), and says whether it did. A checkpoint reads a page from the
// log and writes it into the database before it reads the next, so the log then hands SQLite the sealed
// image and the database writes it as it is: the page is neither opened nor sealed again. Nothing is kept
// (the page is opened as usual) outside a checkpoint, while an earlier page is still unwritten, or if the
// buffer cannot grow.
static int carry_page(cipher_file *file, uint32_t number, const uint8_t *sealed, int size) {
    cipher_file *database = file->database;
    if (database == NULL || !database->checkpointing || database->carried_size != 0) return 0;
    if (database->carried_capacity < size) {
        uint8_t *grown = sqlite3_malloc(size);
        if (grown == NULL) return 0;
        sqlite3_free(database->carried);
        database->carried = grown;
        database->carried_capacity = size;
    }
    memcpy(database->carried, sealed, (size_t)size);
    database->carried_size = size;
    database->carried_page = number;
    return 1;
}

// MARK: The write-ahead log

static int wal_page_size(cipher_file *file) {
    if (file->page_size == 0) {
        uint8_t header[WAL_HEADER];
        int rc = real_read(file, header, WAL_HEADER, 0);
        if (rc != SQLITE_OK) return rc;
        uint32_t size = big_endian(header + 8);
        if (size < 512 || size > 65536 || (size & (size - 1)) != 0) return SQLITE_IOERR_READ;
        file->page_size = (int)size;
    }
    return SQLITE_OK;
}

static int wal_read(cipher_file *file, void *out, int amount, sqlite3_int64 offset) {
    if (offset < WAL_HEADER) {
        int rc = real_read(file, out, amount, offset);
        if (rc == SQLITE_OK && offset == 0 && amount >= 12) {
            uint32_t size = big_endian((uint8_t *)out + 8);
            if (size >= 512 && size <= 65536 && (size & (size - 1)) == 0) file->page_size = (int)size;
        }
        return rc;
    }
    int rc = wal_page_size(file);
    if (rc != SQLITE_OK) return rc == SQLITE_IOERR_SHORT_READ ? real_read(file, out, amount, offset) : rc;
    // Made before a frame is read, so that running out of memory is not taken for a frame that fails.
    if (open_context(&file->cipher) == NULL || mask_context(&file->cipher) == NULL) return SQLITE_IOERR_NOMEM;
    int size = file->page_size, frame = FRAME_HEADER + size;
    sqlite3_int64 frame_start = offset - (offset - WAL_HEADER) % frame;
    sqlite3_int64 within = offset - frame_start;
    // A read inside a frame header: the header is in the clear but for its masked checksum.
    if (within + amount <= FRAME_HEADER) {
        uint8_t header[FRAME_HEADER];
        rc = real_read(file, header, FRAME_HEADER, frame_start);
        if (rc != SQLITE_OK) {
            if (rc == SQLITE_IOERR_SHORT_READ) memset(out, 0, (size_t)amount);
            return rc;
        }
        if (!mask_checksum(&file->cipher, header, frame_start)) return SQLITE_IOERR_READ;
        memcpy(out, header + within, (size_t)amount);
        return SQLITE_OK;
    }
    if (within + amount > frame) return SQLITE_IOERR_READ;
    if (!ensure_buffer(file, 2 * frame)) return SQLITE_IOERR_NOMEM;
    uint8_t *sealed = file->buffer, *plain = file->buffer + frame;
    rc = real_read(file, sealed, frame, frame_start);
    if (rc != SQLITE_OK) {
        if (rc == SQLITE_IOERR_SHORT_READ) memset(out, 0, (size_t)amount);
        return rc;
    }
    // A checkpoint reads each page whole (after its frame header), then writes it into the database.
    if (within == FRAME_HEADER && amount == size && carry_page(file, big_endian(sealed), sealed + FRAME_HEADER, size)) {
        memcpy(out, sealed + FRAME_HEADER, (size_t)size);
        return SQLITE_OK;
    }
    memcpy(plain, sealed, FRAME_HEADER);
    if (!mask_checksum(&file->cipher, plain, frame_start)) return SQLITE_IOERR_READ;
    if (!open_page(&file->cipher, big_endian(sealed), sealed + FRAME_HEADER, plain + FRAME_HEADER, size)) {
        // Recovery reads whole frames and stops at the first whose checksum fails; a frame that fails
        // authentication is given as it is on disk, whose checksum cannot match, so recovery ends the
        // log there as it does at a torn frame. A read of a page alone is an error.
        if (within == 0 && amount == frame) {
            memcpy(out, plain, FRAME_HEADER);
            memcpy((uint8_t *)out + FRAME_HEADER, sealed + FRAME_HEADER, (size_t)size);
            return SQLITE_OK;
        }
        return modelstore_cipher_auth_failed;
    }
    memcpy(out, plain + within, (size_t)amount);
    return SQLITE_OK;
}

static int wal_write(cipher_file *file, const void *data, int amount, sqlite3_int64 offset) {
    if (offset < WAL_HEADER) {
        if (offset == 0 && amount >= 12) {
            uint32_t size = big_endian((const uint8_t *)data + 8);
            if (size >= 512 && size <= 65536 && (size & (size - 1)) == 0) file->page_size = (int)size;
        }
        return real_write(file, data, amount, offset);
    }
    int rc = wal_page_size(file);
    if (rc != SQLITE_OK) return rc == SQLITE_IOERR_SHORT_READ ? SQLITE_IOERR_WRITE : rc;
    int size = file->page_size, frame = FRAME_HEADER + size;
    sqlite3_int64 within = (offset - WAL_HEADER) % frame;
    if (within + amount <= FRAME_HEADER) {
        // SQLite writes a frame header whole (and rewrites it whole when it recomputes checksums).
        if (within != 0 || amount != FRAME_HEADER) return SQLITE_IOERR_WRITE;
        uint8_t header[FRAME_HEADER];
        memcpy(header, data, FRAME_HEADER);
        if (!mask_checksum(&file->cipher, header, offset)) return SQLITE_IOERR_WRITE;
        file->frame_header_offset = offset;
        file->frame_page = big_endian(header);
        return real_write(file, header, FRAME_HEADER, offset);
    }
    // Past the header, SQLite writes a frame's page whole, after its header (or over the page of a
    // frame written earlier in the same transaction, whose header is on disk).
    if (within != FRAME_HEADER || amount != size) return SQLITE_IOERR_WRITE;
    uint32_t number = file->frame_page;
    if (file->frame_header_offset != offset - FRAME_HEADER) {
        uint8_t header[4];
        rc = real_read(file, header, 4, offset - FRAME_HEADER);
        if (rc != SQLITE_OK) return SQLITE_IOERR_WRITE;
        number = big_endian(header);
    }
    if (!ensure_buffer(file, size)) return SQLITE_IOERR_NOMEM;
    if (!seal_page(&file->cipher, number, data, file->buffer, size)) return SQLITE_IOERR_WRITE;
    return real_write(file, file->buffer, size, offset);
}

// MARK: The rollback journal

// A journal record is the page number (a 4-byte write or read), the page at the next offset, then a
// checksum; the page is told by following its number directly. Headers start with the journal's magic.
static int is_journal_page(cipher_file *file, const void *page, int amount, sqlite3_int64 offset) {
    return file->word_offset >= 0 && offset == file->word_offset + 4 && amount >= 512 && (amount & (amount - 1)) == 0
        && memcmp(page, journal_magic, sizeof journal_magic) != 0;
}

static int journal_read(cipher_file *file, void *out, int amount, sqlite3_int64 offset) {
    int rc = real_read(file, out, amount, offset);
    if (rc != SQLITE_OK) return rc;
    if (amount == 4) {
        file->word_offset = offset;
        file->word = big_endian(out);
        return rc;
    }
    if (is_journal_page(file, out, amount, offset)) {
        file->word_offset = -1;
        if (!ensure_buffer(file, amount) || open_context(&file->cipher) == NULL) return SQLITE_IOERR_NOMEM;
        // A record that fails authentication (a torn last record) is left as it is on disk: its
        // checksum then fails, and the rollback stops there as SQLite's does at a torn record.
        if (open_page(&file->cipher, file->word, out, file->buffer, amount)) memcpy(out, file->buffer, (size_t)amount);
        return SQLITE_OK;
    }
    file->word_offset = -1;
    return rc;
}

static int journal_write(cipher_file *file, const void *data, int amount, sqlite3_int64 offset) {
    if (amount == 4) {
        file->word_offset = offset;
        file->word = big_endian(data);
        return real_write(file, data, amount, offset);
    }
    if (is_journal_page(file, data, amount, offset)) {
        file->word_offset = -1;
        if (!ensure_buffer(file, amount)) return SQLITE_IOERR_NOMEM;
        if (!seal_page(&file->cipher, file->word, data, file->buffer, amount)) return SQLITE_IOERR_WRITE;
        return real_write(file, file->buffer, amount, offset);
    }
    file->word_offset = -1;
    return real_write(file, data, amount, offset);
}

// MARK: I/O methods

static int cipher_close(sqlite3_file *base) {
    cipher_file *file = (cipher_file *)base;
    int rc = file->real->pMethods ? file->real->pMethods->xClose(file->real) : SQLITE_OK;
    if (file->buffer) {
        OPENSSL_cleanse(file->buffer, (size_t)file->buffer_size);
        sqlite3_free(file->buffer);
    }
    if (file->carried) {
        OPENSSL_cleanse(file->carried, (size_t)file->carried_capacity);
        sqlite3_free(file->carried);
    }
    if (file->page_one) {
        // The plaintext half; the sealed image is what the file holds.
        OPENSSL_cleanse(file->page_one + file->page_one_capacity / 2, (size_t)file->page_one_capacity / 2);
        sqlite3_free(file->page_one);
    }
    cipher_free(&file->cipher);
    return rc;
}

static int cipher_read(sqlite3_file *base, void *out, int amount, sqlite3_int64 offset) {
    cipher_file *file = (cipher_file *)base;
    switch (file->kind) {
    case kind_database: return database_read(file, out, amount, offset);
    case kind_wal: return wal_read(file, out, amount, offset);
    case kind_journal: return journal_read(file, out, amount, offset);
    default: return real_read(file, out, amount, offset);
    }
}

static int cipher_write(sqlite3_file *base, const void *data, int amount, sqlite3_int64 offset) {
    cipher_file *file = (cipher_file *)base;
    switch (file->kind) {
    case kind_database: return database_write(file, data, amount, offset);
    case kind_wal: return wal_write(file, data, amount, offset);
    case kind_journal: return journal_write(file, data, amount, offset);
    default: return real_write(file, data, amount, offset);
    }
}

#define REAL(file) (((cipher_file *)(file))->real)

static int cipher_truncate(sqlite3_file *f, sqlite3_int64 size) { return REAL(f)->pMethods->xTruncate(REAL(f), size); }
static int cipher_sync(sqlite3_file *f, int flags) { return REAL(f)->pMethods->xSync(REAL(f), flags); }
static int cipher_file_size(sqlite3_file *f, sqlite3_int64 *size) {
    return REAL(f)->pMethods->xFileSize(REAL(f), size);
}
static int cipher_lock(sqlite3_file *f, int lock) { return REAL(f)->pMethods->xLock(REAL(f), lock); }
static int cipher_unlock(sqlite3_file *f, int lock) { return REAL(f)->pMethods->xUnlock(REAL(f), lock); }
static int cipher_check_lock(sqlite3_file *f, int *out) {
    return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}
static int cipher_file_control(sqlite3_file *f, int op, void *arg) {
    cipher_file *file = (cipher_file *)f;
    if (file->kind == kind_database && (op == SQLITE_FCNTL_CKPT_START || op == SQLITE_FCNTL_CKPT_DONE)) {
        file->checkpointing = op == SQLITE_FCNTL_CKPT_START;
        file->carried_size = 0;
    }
    return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}
static int cipher_sector_size(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
// Power-safe overwrite, which the default VFS reports too: SQLite then writes log frames whole, never
// splitting a page at a sector boundary, so every write of a page carries its whole sealed image.
static int cipher_device(sqlite3_file *f) {
    return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)) | SQLITE_IOCAP_POWERSAFE_OVERWRITE;
}
static int cipher_shm_map(sqlite3_file *f, int page, int size, int extend, void volatile **out) {
    return REAL(f)->pMethods->xShmMap(REAL(f), page, size, extend, out);
}
static int cipher_shm_lock(sqlite3_file *f, int offset, int n, int flags) {
    return REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags);
}
static void cipher_shm_barrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int cipher_shm_unmap(sqlite3_file *f, int delete) { return REAL(f)->pMethods->xShmUnmap(REAL(f), delete); }
// No memory map: SQLite would read the sealed pages from it directly.
static int cipher_fetch(sqlite3_file *f, sqlite3_int64 offset, int amount, void **out) {
    (void)f, (void)offset, (void)amount;
    *out = NULL;
    return SQLITE_OK;
}
static int cipher_unfetch(sqlite3_file *f, sqlite3_int64 offset, void *page) {
    (void)f, (void)offset, (void)page;
    return SQLITE_OK;
}

// MARK: The VFS

static sqlite3_vfs *root_vfs(void) { return (sqlite3_vfs *)cipher_vfs.pAppData; }

static int cipher_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *base, int flags, int *out_flags) {
    (void)vfs;
    cipher_file *file = (cipher_file *)base;
    memset(file, 0, sizeof *file);
    file->real = (sqlite3_file *)(file + 1);
    file->word_offset = -1;
    file->frame_header_offset = -1;
    file->kind = kind_plain;
    const char *key_number = NULL;
    if (name != NULL && (flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL))) {
        key_number = sqlite3_uri_parameter(name, MODELSTORE_CIPHER_KEY_PARAMETER);
    }
    if (key_number != NULL) {
        uint8_t key[32], salt[SALT];
        if (!key_copy(atoi(key_number), key, salt)) return SQLITE_CANTOPEN;
        int ok = cipher_init(&file->cipher, key, salt);
        OPENSSL_cleanse(key, sizeof key);
        if (!ok) {
            cipher_free(&file->cipher);
            return SQLITE_NOMEM;
        }
        file->kind = (flags & SQLITE_OPEN_MAIN_DB) ? kind_database : (flags & SQLITE_OPEN_WAL) ? kind_wal : kind_journal;
        file->key_identifier = atoi(key_number);
    }
    int rc = root_vfs()->xOpen(root_vfs(), name, file->real, flags, out_flags);
    if (rc != SQLITE_OK || file->real->pMethods == NULL) {
        cipher_free(&file->cipher);
        base->pMethods = NULL;
        return rc;
    }
    base->pMethods = &cipher_methods;
    if (file->kind == kind_database) {
        // The page 1 the key's check opened, if it kept one: SQLite's first reads of page 1 then open nothing
        // when the file still holds those sealed bytes.
        pthread_mutex_lock(&keys_lock);
        key_slot *slot = file->key_identifier >= 0 && file->key_identifier < key_count ? &keys[file->key_identifier] : NULL;
        if (slot != NULL && slot->used && slot->page_one != NULL) {
            uint8_t *copy = sqlite3_malloc(2 * slot->page_one_size);
            if (copy != NULL) {
                memcpy(copy, slot->page_one, 2 * (size_t)slot->page_one_size);
                file->page_one = copy;
                file->page_one_capacity = file->page_one_size = slot->page_one_size;
                file->page_one_capacity *= 2;
            }
        }
        pthread_mutex_unlock(&keys_lock);
    }
    if (file->kind == kind_wal) {
        // SQLite opens a log after its database, and closes it first, so the pointer stays valid.
        sqlite3_file *database = sqlite3_database_file_object(name);
        if (database != NULL && database->pMethods == &cipher_methods) {
            cipher_file *candidate = (cipher_file *)database;
            if (candidate->kind == kind_database && candidate->key_identifier == file->key_identifier
                && memcmp(candidate->cipher.salt, file->cipher.salt, SALT) == 0) {
                file->database = candidate;
            }
        }
    }
    return SQLITE_OK;
}

static int cipher_delete(sqlite3_vfs *v, const char *name, int sync) {
    (void)v;
    return root_vfs()->xDelete(root_vfs(), name, sync);
}
static int cipher_access(sqlite3_vfs *v, const char *name, int flags, int *out) {
    (void)v;
    return root_vfs()->xAccess(root_vfs(), name, flags, out);
}
static int cipher_full_path(sqlite3_vfs *v, const char *name, int size, char *out) {
    (void)v;
    return root_vfs()->xFullPathname(root_vfs(), name, size, out);
}
static void *cipher_dl_open(sqlite3_vfs *v, const char *name) {
    (void)v;
    return root_vfs()->xDlOpen(root_vfs(), name);
}
static void cipher_dl_error(sqlite3_vfs *v, int size, char *out) {
    (void)v;
    root_vfs()->xDlError(root_vfs(), size, out);
}
static void (*cipher_dl_sym(sqlite3_vfs *v, void *handle, const char *symbol))(void) {
    (void)v;
    return root_vfs()->xDlSym(root_vfs(), handle, symbol);
}
static void cipher_dl_close(sqlite3_vfs *v, void *handle) {
    (void)v;
    root_vfs()->xDlClose(root_vfs(), handle);
}
static int cipher_randomness(sqlite3_vfs *v, int size, char *out) {
    (void)v;
    return root_vfs()->xRandomness(root_vfs(), size, out);
}
static int cipher_sleep(sqlite3_vfs *v, int microseconds) {
    (void)v;
    return root_vfs()->xSleep(root_vfs(), microseconds);
}
static int cipher_current_time(sqlite3_vfs *v, double *out) {
    (void)v;
    return root_vfs()->xCurrentTime(root_vfs(), out);
}
static int cipher_last_error(sqlite3_vfs *v, int size, char *out) {
    (void)v;
    return root_vfs()->xGetLastError ? root_vfs()->xGetLastError(root_vfs(), size, out) : 0;
}
static int cipher_current_time_int64(sqlite3_vfs *v, sqlite3_int64 *out) {
    (void)v;
    return root_vfs()->xCurrentTimeInt64(root_vfs(), out);
}

static pthread_once_t registration = PTHREAD_ONCE_INIT;
static int registration_result = SQLITE_OK;

static void register_vfs(void) {
    sqlite3_vfs *root = sqlite3_vfs_find(NULL);
    if (root == NULL || root->iVersion < 2) {
        registration_result = SQLITE_ERROR;
        return;
    }
    cipher_methods = (sqlite3_io_methods){
        .iVersion = 3, .xClose = cipher_close, .xRead = cipher_read, .xWrite = cipher_write,
        .xTruncate = cipher_truncate, .xSync = cipher_sync, .xFileSize = cipher_file_size, .xLock = cipher_lock,
        .xUnlock = cipher_unlock, .xCheckReservedLock = cipher_check_lock, .xFileControl = cipher_file_control,
        .xSectorSize = cipher_sector_size, .xDeviceCharacteristics = cipher_device, .xShmMap = cipher_shm_map,
        .xShmLock = cipher_shm_lock, .xShmBarrier = cipher_shm_barrier, .xShmUnmap = cipher_shm_unmap,
        .xFetch = cipher_fetch, .xUnfetch = cipher_unfetch,
    };
    cipher_vfs = (sqlite3_vfs){
        .iVersion = 2, .szOsFile = (int)sizeof(cipher_file) + root->szOsFile, .mxPathname = root->mxPathname,
        .zName = MODELSTORE_CIPHER_VFS, .pAppData = root, .xOpen = cipher_open, .xDelete = cipher_delete,
        .xAccess = cipher_access, .xFullPathname = cipher_full_path, .xDlOpen = cipher_dl_open,
        .xDlError = cipher_dl_error, .xDlSym = cipher_dl_sym, .xDlClose = cipher_dl_close,
        .xRandomness = cipher_randomness, .xSleep = cipher_sleep, .xCurrentTime = cipher_current_time,
        .xGetLastError = cipher_last_error, .xCurrentTimeInt64 = cipher_current_time_int64,
    };
    registration_result = sqlite3_vfs_register(&cipher_vfs, 0);
}

int modelstore_cipher_register(void) {
    pthread_once(&registration, register_vfs);
    return registration_result;
}

// MARK: Probing a file

static int read_at(int descriptor, uint8_t *buffer, int amount, off_t offset) {
    int done = 0;
    while (done < amount) {
        ssize_t count = pread(descriptor, buffer + done, (size_t)(amount - done), offset + done);
        if (count <= 0) return done;
        done += (int)count;
    }
    return done;
}

int modelstore_cipher_classify(const char *path, uint8_t *salt) {
    int descriptor = open(path, O_RDONLY | O_CLOEXEC);
    if (descriptor < 0) return modelstore_cipher_file_missing;
    uint8_t header[CLEAR_HEADER];
    int count = read_at(descriptor, header, CLEAR_HEADER, 0);
    close(descriptor);
    if (count == 0) return modelstore_cipher_file_empty;
    if (count < CLEAR_HEADER) return modelstore_cipher_file_unknown;
    if (memcmp(header, sqlite_magic, SALT) == 0) return modelstore_cipher_file_plaintext;
    // An encrypted file: SQLite's page size, file format versions 1 or 2, the reserved bytes this
    // cipher needs, and the payload fractions every SQLite file has, after the salt.
    if (header_page_size(header) == 0 || header[18] < 1 || header[18] > 2 || header[19] < 1 || header[19] > 2
        || header[20] < RESERVE || header[21] != 64 || header[22] != 32 || header[23] != 32) {
        return modelstore_cipher_file_unknown;
    }
    memcpy(salt, header, SALT);
    return modelstore_cipher_file_encrypted;
}

// Tries `key` on page 1 of the encrypted file at `path` (see `modelstore_cipher_check_key`). When it opens
// and `slot` is a key slot's number, keeps the page in the slot (see `key_slot.page_one`).
static int check_key(const char *path, const uint8_t *key, const uint8_t *salt, int slot) {
    int descriptor = open(path, O_RDONLY | O_CLOEXEC);
    if (descriptor < 0) return modelstore_cipher_key_unreadable;
    uint8_t header[CLEAR_HEADER];
    int size = read_at(descriptor, header, CLEAR_HEADER, 0) == CLEAR_HEADER ? header_page_size(header) : 0;
    // A 4 KiB page (SQLite's default) is checked on the stack: a malloc of 8 KiB in a long-running process
    // can cost more than opening the page.
    uint8_t small[2 * 4096];
    uint8_t *pages = size == 0 ? NULL : size <= 4096 ? small : malloc((size_t)size * 2);
    page_cipher cipher = {0};
    int result = modelstore_cipher_key_unreadable;
    // Only the context that opens pages is made.
    if (pages != NULL && cipher_init(&cipher, key, salt) && open_context(&cipher) != NULL) {
        uint8_t *sealed = pages, *plain = pages + size;
        if (read_at(descriptor, sealed, size, 0) == size) {
            // The page opens into `plain`, leaving `sealed` as read, so that the two can be kept.
            if (open_page(&cipher, 1, sealed, plain, size)) {
                result = modelstore_cipher_key_opens;
            } else if (read_at(descriptor, sealed, size, size) == size && open_page(&cipher, 2, sealed, plain, size)) {
                // The second page is read only when the first fails.
                result = modelstore_cipher_key_page_damaged;
            } else {
                result = modelstore_cipher_key_wrong;
            }
        }
        if (result == modelstore_cipher_key_opens && slot >= 0) {
            uint8_t *kept = malloc((size_t)size * 2);
            pthread_mutex_lock(&keys_lock);
            if (kept != NULL && slot < key_count && keys[slot].used) {
                slot_forget_page_one(&keys[slot]);
                memcpy(kept, pages, (size_t)size * 2);
                keys[slot].page_one = kept;
                keys[slot].page_one_size = size;
                kept = NULL;
            }
            pthread_mutex_unlock(&keys_lock);
            free(kept);
        }
        OPENSSL_cleanse(plain, (size_t)size);
    }
    cipher_free(&cipher);
    if (pages != small) free(pages);
    close(descriptor);
    return result;
}

int modelstore_cipher_check_key(const char *path, const uint8_t *key, const uint8_t *salt) {
    return check_key(path, key, salt, -1);
}

int modelstore_cipher_check_registered_key(const char *path, int identifier) {
    uint8_t key[32], salt[SALT];
    if (!key_copy(identifier, key, salt)) return modelstore_cipher_key_unreadable;
    int result = check_key(path, key, salt, identifier);
    OPENSSL_cleanse(key, sizeof key);
    return result;
}

// MARK: Checking a sealed write-ahead log

// SQLite's log checksum over `length` bytes (a multiple of 8), continuing from `s`: pairs of 32-bit words
// in the byte order the log's magic names, `s0 += x0 + s1; s1 += x1 + s0`.
static void wal_checksum(const uint8_t *bytes, int64_t length, int big, uint32_t *s) {
    for (int64_t index = 0; index + 8 <= length; index += 8) {
        uint32_t x0 = big_endian(bytes + index), x1 = big_endian(bytes + index + 4);
        if (!big) {
            x0 = __builtin_bswap32(x0);
            x1 = __builtin_bswap32(x1);
        }
        s[0] += x0 + s[1];
        s[1] += x1 + s[0];
    }
}

int64_t modelstore_cipher_wal_damage(int identifier, const uint8_t *log, int64_t length) {
    if (length <= WAL_HEADER) return -1;
    uint32_t magic = big_endian(log);
    if ((magic & 0xFFFFFFFEu) != 0x377F0682u) return 0;
    int big = (int)(magic & 1);
    uint32_t size = big_endian(log + 8);
    if (size < 512 || size > 65536 || (size & (size - 1)) != 0) return 0;
    uint32_t sums[2] = {0, 0};
    wal_checksum(log, 24, big, sums);
    if (sums[0] != big_endian(log + 24) || sums[1] != big_endian(log + 28)) return 0;
    uint8_t key[32], salt[SALT];
    if (!key_copy(identifier, key, salt)) return -2;
    page_cipher cipher = {0};
    int ready = cipher_init(&cipher, key, salt) && open_context(&cipher) != NULL && mask_context(&cipher) != NULL;
    OPENSSL_cleanse(key, sizeof key);
    uint8_t *plain = ready ? malloc(size) : NULL;
    if (plain == NULL) {
        cipher_free(&cipher);
        return -2;
    }
    // The frames of the log's generation, as SQLite's recovery reads them through the cipher: each must
    // authenticate and continue the checksum chain; the first that does not ends the valid log.
    int64_t frame = FRAME_HEADER + (int64_t)size, offset = WAL_HEADER;
    uint8_t header[FRAME_HEADER];
    while (offset + frame <= length && memcmp(log + offset + 8, log + 16, 8) == 0) {
        memcpy(header, log + offset, FRAME_HEADER);
        if (!mask_checksum(&cipher, header, offset)) break;
        if (!open_page(&cipher, big_endian(header), log + offset + FRAME_HEADER, plain, (int)size)) break;
        wal_checksum(header, 8, big, sums);
        wal_checksum(plain, size, big, sums);
        if (sums[0] != big_endian(header + 16) || sums[1] != big_endian(header + 20)) break;
        offset += frame;
    }
    OPENSSL_cleanse(plain, size);
    free(plain);
    cipher_free(&cipher);
    // Past the first bad frame's own salts: a frame of the same generation further on is committed work
    // that recovery would drop, so the log is damaged, not merely unfinished.
    for (int64_t index = offset + 16; index + 8 <= length; index++) {
        if (memcmp(log + index, log + 16, 8) == 0) return offset;
    }
    return -1;
}
