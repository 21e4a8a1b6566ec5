/*
 * samsa-broker: small pieces the SASL mechanisms share: strict base64
 * (RFC 4648, padded, no line breaks or spaces), HMAC and digests of
 * SCRAM's two hashes on libcrypto, a constant-time comparison.
 * @locality any thread
 */
#ifndef SAMSA_BROKER_SECURITY_SASL_UTIL_H
#define SAMSA_BROKER_SECURITY_SASL_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest digest here (SHA-512). */
#define BR_SASL_HASH_MAX 64

/* Base64 of in[0..len) into out (NUL-terminated; room for 4 * ((len + 2) / 3)
 * + 1 bytes). Returns the characters written. */
size_t br_b64_encode(const uint8_t *in, size_t len, char *out);
/* Strict base64 in[0..len) into out[0..cap): the length of the bytes
 * decoded, or -1 (a character outside the alphabet, wrong padding, a
 * length not a multiple of 4, more than cap bytes). */
long br_b64_decode(const char *in, size_t len, uint8_t *out, size_t cap);

/* SCRAM's hashes: 256 (SHA-256) or 512 (SHA-512); the digest length. */
size_t br_sasl_hash_len(int bits);
/* HMAC(key, data) into out (br_sasl_hash_len bytes); false on a libcrypto
 * failure. */
bool br_sasl_hmac(int bits, const uint8_t *key, size_t key_len, const void *data, size_t len,
                  uint8_t *out);
/* H(data) into out. */
bool br_sasl_digest(int bits, const void *data, size_t len, uint8_t *out);
/* Hi(password, salt, iterations) of RFC 5802 (PBKDF2 with HMAC). */
bool br_sasl_pbkdf2(int bits, const char *password, size_t password_len, const uint8_t *salt,
                    size_t salt_len, int iterations, uint8_t *out);
/* a[0..n) == b[0..n), in a time that depends on n only. */
bool br_sasl_equal(const void *a, const void *b, size_t n);

#endif
