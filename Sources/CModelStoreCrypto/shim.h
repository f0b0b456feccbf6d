// The system's OpenSSL libcrypto (Debian: libssl-dev): AES-256-GCM through EVP, RAND_bytes, scrypt
// and PBKDF2. The helpers below do one whole seal or open per call, so Swift makes one C call per
// record and never holds an EVP context across threads.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdint.h>
#include <string.h>

// Seals `length` bytes of `plaintext` with AES-256-GCM under the 32-byte `key` and the 12-byte
// `nonce`, authenticating `aad` as well: writes `length` bytes of ciphertext to `ciphertext`, then
// the 16-byte tag. Returns 1 on success, 0 on failure.
static inline int modelstore_aes256gcm_seal(
    const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, int aad_length,
    const uint8_t *plaintext, int length, uint8_t *ciphertext, uint8_t *tag)
{
    EVP_CIPHER_CTX *context = EVP_CIPHER_CTX_new();
    if (context == NULL) return 0;
    int written = 0, ok = 1;
    ok = ok && EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), NULL, key, nonce) == 1;
    if (ok && aad_length > 0) ok = EVP_EncryptUpdate(context, NULL, &written, aad, aad_length) == 1;
    if (ok && length > 0) ok = EVP_EncryptUpdate(context, ciphertext, &written, plaintext, length) == 1;
    ok = ok && EVP_EncryptFinal_ex(context, ciphertext + (length > 0 ? written : 0), &written) == 1;
    ok = ok && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
    EVP_CIPHER_CTX_free(context);
    return ok;
}

// Opens what `modelstore_aes256gcm_seal` sealed: checks the tag before it returns 1; on a wrong
// key, a changed byte or a changed `aad` it returns 0 and the caller must discard `plaintext`.
static inline int modelstore_aes256gcm_open(
    const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, int aad_length,
    const uint8_t *ciphertext, int length, const uint8_t *tag, uint8_t *plaintext)
{
    EVP_CIPHER_CTX *context = EVP_CIPHER_CTX_new();
    if (context == NULL) return 0;
    int written = 0, ok = 1;
    uint8_t expected[16];
    memcpy(expected, tag, 16);
    ok = ok && EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), NULL, key, nonce) == 1;
    if (ok && aad_length > 0) ok = EVP_DecryptUpdate(context, NULL, &written, aad, aad_length) == 1;
    if (ok && length > 0) ok = EVP_DecryptUpdate(context, plaintext, &written, ciphertext, length) == 1;
    ok = ok && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, 16, expected) == 1;
    ok = ok && EVP_DecryptFinal_ex(context, plaintext + (length > 0 ? written : 0), &written) == 1;
    EVP_CIPHER_CTX_free(context);
    return ok;
}
