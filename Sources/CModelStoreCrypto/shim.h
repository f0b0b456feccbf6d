// The system's OpenSSL libcrypto (Debian: libssl-dev): AES-256-GCM through EVP, RAND_bytes,
// HMAC-SHA256 and scrypt. The helpers below do one whole seal or open per call, so Swift makes one C call per
// record; a context is used by one thread at a time.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdint.h>
#include <string.h>

// A context that holds the key schedule, for the calls below: made once per key (and per thread
// that uses it at a time), so a small record pays for one AES-GCM pass, not for a key setup.
static inline EVP_CIPHER_CTX *modelstore_aes256gcm_context(const uint8_t *key, int encrypting) {
    EVP_CIPHER_CTX *context = EVP_CIPHER_CTX_new();
    if (context == NULL) return NULL;
    int ok = encrypting ? EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), NULL, key, NULL)
                        : EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), NULL, key, NULL);
    if (ok != 1) {
        EVP_CIPHER_CTX_free(context);
        return NULL;
    }
    return context;
}

// Seals `length` bytes of `plaintext` with AES-256-GCM under the context's key and the 12-byte
// `nonce`, authenticating `aad` as well: writes `length` bytes of ciphertext to `ciphertext` (which
// may be `plaintext` itself), then the 16-byte tag. The context comes from
// `modelstore_aes256gcm_context(key, 1)`. Returns 1 on success, 0 on failure.
static inline int modelstore_aes256gcm_seal_with(
    EVP_CIPHER_CTX *context, const uint8_t *nonce, const uint8_t *aad, int aad_length,
    const uint8_t *plaintext, int length, uint8_t *ciphertext, uint8_t *tag)
{
    int written = 0, ok = 1;
    ok = ok && EVP_EncryptInit_ex(context, NULL, NULL, NULL, nonce) == 1;
    if (ok && aad_length > 0) ok = EVP_EncryptUpdate(context, NULL, &written, aad, aad_length) == 1;
    if (ok && length > 0) ok = EVP_EncryptUpdate(context, ciphertext, &written, plaintext, length) == 1;
    ok = ok && EVP_EncryptFinal_ex(context, ciphertext + (length > 0 ? written : 0), &written) == 1;
    ok = ok && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
    return ok;
}

// Starts a seal that is fed in pieces, for a document too large to stage whole: sets the 12-byte
// `nonce` and authenticates `aad`. `modelstore_aes256gcm_seal_piece` then encrypts the plaintext in
// order, and `modelstore_aes256gcm_seal_end` writes the tag; the bytes are those of one
// `modelstore_aes256gcm_seal_with` call over the whole plaintext. Returns 1 on success, 0 on failure.
static inline int modelstore_aes256gcm_seal_begin(
    EVP_CIPHER_CTX *context, const uint8_t *nonce, const uint8_t *aad, int aad_length)
{
    int written = 0, ok = EVP_EncryptInit_ex(context, NULL, NULL, NULL, nonce) == 1;
    if (ok && aad_length > 0) ok = EVP_EncryptUpdate(context, NULL, &written, aad, aad_length) == 1;
    return ok;
}

// Encrypts the next `length` bytes of a seal begun with `modelstore_aes256gcm_seal_begin` into
// `ciphertext` (GCM is a stream mode: exactly `length` bytes come out). Returns 1 on success.
static inline int modelstore_aes256gcm_seal_piece(
    EVP_CIPHER_CTX *context, const uint8_t *plaintext, int length, uint8_t *ciphertext)
{
    int written = 0;
    if (length == 0) return 1;
    return EVP_EncryptUpdate(context, ciphertext, &written, plaintext, length) == 1 && written == length;
}

// Ends a seal begun with `modelstore_aes256gcm_seal_begin`: writes the 16-byte tag. Returns 1 on success.
static inline int modelstore_aes256gcm_seal_end(EVP_CIPHER_CTX *context, uint8_t *tag) {
    uint8_t rest[16];
    int written = 0, ok = EVP_EncryptFinal_ex(context, rest, &written) == 1 && written == 0;
    return ok && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
}

// Opens what `modelstore_aes256gcm_seal_with` sealed, on a context from
// `modelstore_aes256gcm_context(key, 0)`: checks the tag before it returns 1; on a wrong key, a
// changed byte or a changed `aad` it returns 0 and the caller must discard `plaintext`.
static inline int modelstore_aes256gcm_open_with(
    EVP_CIPHER_CTX *context, const uint8_t *nonce, const uint8_t *aad, int aad_length,
    const uint8_t *ciphertext, int length, const uint8_t *tag, uint8_t *plaintext)
{
    int written = 0, ok = 1;
    uint8_t expected[16];
    memcpy(expected, tag, 16);
    ok = ok && EVP_DecryptInit_ex(context, NULL, NULL, NULL, nonce) == 1;
    if (ok && aad_length > 0) ok = EVP_DecryptUpdate(context, NULL, &written, aad, aad_length) == 1;
    if (ok && length > 0) ok = EVP_DecryptUpdate(context, plaintext, &written, ciphertext, length) == 1;
    ok = ok && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, 16, expected) == 1;
    ok = ok && EVP_DecryptFinal_ex(context, plaintext + (length > 0 ? written : 0), &written) == 1;
    return ok;
}
