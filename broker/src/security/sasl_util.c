/* samsa-broker: base64, HMAC and digests for SASL (see sasl_util.h). */
#include "security/sasl_util.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <limits.h>
#include <string.h>

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t br_b64_encode(const uint8_t *in, size_t len, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        size_t left = len - i;
        if (left > 1) {
            v |= (uint32_t)in[i + 1] << 8;
        }
        if (left > 2) {
            v |= in[i + 2];
        }
        out[o++] = b64_alphabet[(v >> 18) & 63];
        out[o++] = b64_alphabet[(v >> 12) & 63];
        out[o++] = left > 1 ? b64_alphabet[(v >> 6) & 63] : '=';
        out[o++] = left > 2 ? b64_alphabet[v & 63] : '=';
    }
    out[o] = '\0';
    return o;
}

static int b64_value(char c)
{
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    if (c == '+') {
        return 62;
    }
    if (c == '/') {
        return 63;
    }
    return -1;
}

long br_b64_decode(const char *in, size_t len, uint8_t *out, size_t cap)
{
    if (len % 4 != 0 || len / 4 * 3 > (size_t)LONG_MAX) {
        return -1;
    }
    size_t o = 0;
    for (size_t i = 0; i < len; i += 4) {
        bool last = i + 4 == len;
        int pad = 0;
        if (last && in[i + 3] == '=') {
            pad = in[i + 2] == '=' ? 2 : 1;
        }
        uint32_t v = 0;
        for (int k = 0; k < 4; k++) {
            int d = k >= 4 - pad ? 0 : b64_value(in[i + (size_t)k]);
            if (d < 0) {
                return -1;
            }
            v = v << 6 | (uint32_t)d;
        }
        size_t n = 3 - (size_t)pad;
        if (o + n > cap) {
            return -1;
        }
        /* the bits under the padding must be zero (canonical form) */
        if ((pad == 1 && (v & 0xff) != 0) || (pad == 2 && (v & 0xffff) != 0)) {
            return -1;
        }
        out[o++] = (uint8_t)(v >> 16);
        if (n > 1) {
            out[o++] = (uint8_t)(v >> 8);
        }
        if (n > 2) {
            out[o++] = (uint8_t)v;
        }
    }
    return (long)o;
}

static const EVP_MD *hash_md(int bits)
{
    return bits == 512 ? EVP_sha512() : EVP_sha256();
}

size_t br_sasl_hash_len(int bits)
{
    return bits == 512 ? 64 : 32;
}

bool br_sasl_hmac(int bits, const uint8_t *key, size_t key_len, const void *data, size_t len,
                  uint8_t *out)
{
    unsigned out_len = 0;
    if (key_len > INT_MAX) {
        return false;
    }
    return HMAC(hash_md(bits), key, (int)key_len, data, len, out, &out_len) != NULL &&
           out_len == br_sasl_hash_len(bits);
}

bool br_sasl_digest(int bits, const void *data, size_t len, uint8_t *out)
{
    unsigned out_len = 0;
    return EVP_Digest(data, len, out, &out_len, hash_md(bits), NULL) == 1 &&
           out_len == br_sasl_hash_len(bits);
}

bool br_sasl_pbkdf2(int bits, const char *password, size_t password_len, const uint8_t *salt,
                    size_t salt_len, int iterations, uint8_t *out)
{
    if (password_len > INT_MAX || salt_len > INT_MAX) {
        return false;
    }
    return PKCS5_PBKDF2_HMAC(password, (int)password_len, salt, (int)salt_len, iterations,
                             hash_md(bits), (int)br_sasl_hash_len(bits), out) == 1;
}

bool br_sasl_equal(const void *a, const void *b, size_t n)
{
    return CRYPTO_memcmp(a, b, n) == 0;
}
