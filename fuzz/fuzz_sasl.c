/*
 * fuzz_sasl: what a client sends before it is authenticated on a SASL
 * listener, through broker/src/security/: the PLAIN token, SCRAM's
 * client-first and client-final messages, and the texts behind them (a
 * sasl.jaas.config entry, a SCRAM credential string, a /config/users
 * znode).
 *
 * Input: byte 0 picks (value % 5):
 *   0  a PLAIN token (the rest) against the users alice and bob
 *   1  SCRAM: bytes 1-2 the client-first's length N, N bytes of it, then
 *      the client-final, against a store holding alice (SCRAM-SHA-256 and
 *      -512, byte 0's bit 7 picks); the exchange runs again with a
 *      client-final computed here from the input's client-first
 *   2  a sasl.jaas.config text (up to the first NUL)
 *   3  a SCRAM credential string (byte 0's bit 7: SCRAM-SHA-512)
 *   4  a /config/users znode's JSON for the user "z", then a base64 text
 *
 * Checks, beyond "no crash, no over-read, no leak":
 *   - PLAIN accepts exactly `[authzid] NUL user NUL password` with a known
 *     user, its password and an authzid empty or the user, and names that
 *     user; every refusal says why;
 *   - SCRAM's server-first starts with r=<the client's nonce> and holds
 *     s= and i=; a fuzzed client-final is never accepted (it cannot hold
 *     the proof); with the proof computed from alice's password, an
 *     accepted client-first for alice (no authzid, or alice) ends in DONE
 *     as alice with the server's signature, and one for anyone else fails;
 *     no answer holds a NUL;
 *   - a JAAS entry that parses has a module and keys without '=' or space;
 *   - a credential string that parses formats to one that parses to the
 *     same credential;
 *   - a znode the store takes is found (or, without SCRAM keys, not), kept
 *     by a listing that names it and pruned by one that does not;
 *   - base64 that decodes encodes back to the same text.
 */
#include "fuzz.h"

#include <string.h>

#include <samsa-protocol/alloc.h>

#include "security/credentials.h"
#include "security/jaas.h"
#include "security/plain.h"
#include "security/sasl_util.h"
#include "security/scram.h"

#define PASSWORD "alice-secret"

struct fixture {
    struct br_plain_users *plain;
    struct br_scram_store *store;
    struct br_scram_credential cred[2]; /* alice's, by bits 256, 512 */
};

static struct fixture *fixture(void)
{
    static struct fixture f;
    static bool made;
    if (made) {
        return &f;
    }
    struct br_jaas j;
    char err[256];
    const char *text = "org.apache.kafka.common.security.plain.PlainLoginModule required "
                       "username=\"admin\" password=\"x\" user_alice=\"" PASSWORD "\" "
                       "user_bob=\"b\\\"quoted\";";
    fuzz_check(br_jaas_parse(text, &j, err, sizeof err) == 0, "the fixture's JAAS", 0);
    fuzz_check(br_plain_users_new(&j, &f.plain, err, sizeof err) == 0, "the PLAIN users", 0);
    br_jaas_free(&j);
    fuzz_check(br_scram_store_new(&f.store) == 0, "the store", 0);
    char json[2 * BR_SCRAM_CREDENTIAL_MAX + 128];
    char c256[BR_SCRAM_CREDENTIAL_MAX];
    char c512[BR_SCRAM_CREDENTIAL_MAX];
    fuzz_check(br_scram_credential_make(256, PASSWORD, 4096, &f.cred[0]) == 0 &&
                   br_scram_credential_make(512, PASSWORD, 4096, &f.cred[1]) == 0,
               "alice's credentials", 0);
    br_scram_credential_format(256, &f.cred[0], c256);
    br_scram_credential_format(512, &f.cred[1], c512);
    (void)snprintf(json, sizeof json,
                   "{\"version\":1,\"config\":{\"SCRAM-SHA-256\":\"%s\",\"SCRAM-SHA-512\":\"%s\"}}",
                   c256, c512);
    const char *why = "";
    fuzz_check(br_scram_store_set(f.store, "alice", json, strlen(json), &why) == 0, why, 0);
    made = true;
    return &f;
}

static void fuzz_plain(const uint8_t *p, size_t n)
{
    char user[BR_PLAIN_USER_MAX + 1];
    const char *why = NULL;
    int rc = br_plain_authenticate(fixture()->plain, p, n, user, sizeof user, &why);
    /* the one shape accepted, rebuilt from the user named */
    if (rc == 0) {
        const char *pw = strcmp(user, "alice") == 0 ? PASSWORD : "b\"quoted";
        fuzz_check(strcmp(user, "alice") == 0 || strcmp(user, "bob") == 0, "an unknown user", 0);
        size_t ul = strlen(user);
        size_t pl = strlen(pw);
        bool plainform = n == ul + pl + 2 && p[0] == 0 && memcmp(p + 1, user, ul) == 0 &&
                         p[1 + ul] == 0 && memcmp(p + 2 + ul, pw, pl) == 0;
        bool authz = n == 2 * ul + pl + 2 && memcmp(p, user, ul) == 0 && p[ul] == 0 &&
                     memcmp(p + ul + 1, user, ul) == 0 && p[2 * ul + 1] == 0 &&
                     memcmp(p + 2 * ul + 2, pw, pl) == 0;
        fuzz_check(plainform || authz, "PLAIN accepted another token", (int)n);
    } else {
        fuzz_check(rc == -1 && why != NULL && why[0] != '\0', "a refusal without a reason", rc);
    }
}

static void check_printable(const uint8_t *p, size_t n)
{
    fuzz_check(memchr(p, 0, n) == NULL, "an answer with a NUL", (int)n);
}

/* The client-final for alice's password (or a wrong one) after server-first
 * sf, the client-first-bare cfb and gs2 header gs2: malloc'd text. */
static char *client_final(int bits, const char *gs2, size_t gs2_len, const char *cfb,
                          size_t cfb_len, const uint8_t *sf, size_t sf_len, const char *password)
{
    /* r=<nonce>,s=<salt>,i=<n> */
    const char *s_at = memchr(sf, ',', sf_len);
    fuzz_check(s_at != NULL && sf_len > 2 && memcmp(sf, "r=", 2) == 0, "server-first's r=", 0);
    const char *nonce = (const char *)sf + 2;
    size_t nonce_len = (size_t)(s_at - nonce);
    const char *i_at = memchr(s_at + 1, ',', sf_len - (size_t)(s_at + 1 - (const char *)sf));
    fuzz_check(i_at != NULL && memcmp(s_at, ",s=", 3) == 0 && memcmp(i_at, ",i=", 3) == 0,
               "server-first's s= and i=", 0);
    uint8_t salt[BR_SCRAM_SALT_MAX];
    long salt_len = br_b64_decode(s_at + 3, (size_t)(i_at - s_at) - 3, salt, sizeof salt);
    fuzz_check(salt_len > 0, "server-first's salt", (int)salt_len);
    /* the answer is not NUL-terminated: its digits copied first */
    char digits[16] = "";
    size_t dn = sf_len - (size_t)(i_at + 3 - (const char *)sf);
    fuzz_check(dn > 0 && dn < sizeof digits, "server-first's iterations", (int)dn);
    memcpy(digits, i_at + 3, dn);
    long iterations = strtol(digits, NULL, 10);
    fuzz_check(iterations >= BR_SCRAM_MIN_ITERATIONS && iterations <= BR_SCRAM_MAX_ITERATIONS,
               "server-first's iterations", (int)iterations);
    size_t h = br_sasl_hash_len(bits);
    uint8_t salted[BR_SASL_HASH_MAX];
    uint8_t ck[BR_SASL_HASH_MAX];
    uint8_t sk[BR_SASL_HASH_MAX];
    uint8_t sig[BR_SASL_HASH_MAX];
    fuzz_check(br_sasl_pbkdf2(bits, password, strlen(password), salt, (size_t)salt_len,
                              (int)iterations, salted) &&
                   br_sasl_hmac(bits, salted, h, "Client Key", 10, ck) &&
                   br_sasl_digest(bits, ck, h, sk),
               "the client's keys", 0);
    char c[512];
    (void)br_b64_encode((const uint8_t *)gs2, gs2_len, c);
    size_t wp_cap = nonce_len + strlen(c) + 16;
    char *wp = kp_malloc(wp_cap);
    fuzz_check(wp != NULL, "memory", 0);
    int wp_len = snprintf(wp, wp_cap, "c=%s,r=%.*s", c, (int)nonce_len, nonce);
    size_t am_len = cfb_len + 1 + sf_len + 1 + (size_t)wp_len;
    char *am = kp_malloc(am_len);
    fuzz_check(am != NULL, "memory", 0);
    memcpy(am, cfb, cfb_len);
    am[cfb_len] = ',';
    memcpy(am + cfb_len + 1, sf, sf_len);
    am[cfb_len + 1 + sf_len] = ',';
    memcpy(am + cfb_len + 2 + sf_len, wp, (size_t)wp_len);
    fuzz_check(br_sasl_hmac(bits, sk, h, am, am_len, sig), "the client signature", 0);
    kp_free(am);
    uint8_t proof[BR_SASL_HASH_MAX];
    for (size_t i = 0; i < h; i++) {
        proof[i] = ck[i] ^ sig[i];
    }
    char p64[BR_SASL_HASH_MAX * 2];
    (void)br_b64_encode(proof, h, p64);
    size_t cap = (size_t)wp_len + strlen(p64) + 4;
    char *out = kp_malloc(cap);
    fuzz_check(out != NULL, "memory", 0);
    (void)snprintf(out, cap, "%s,p=%s", wp, p64);
    kp_free(wp);
    return out;
}

/* One exchange: the client-first, then `final` (NULL: the one computed
 * here with `password`). Returns the step of the final, or 0 when the
 * first failed. */
static enum br_sasl_step exchange(int bits, const uint8_t *first, size_t first_len,
                                  const uint8_t *final, size_t final_len, const char *password,
                                  char *user)
{
    struct br_scram_server *s = NULL;
    fuzz_check(br_scram_server_new(bits, fixture()->store, &s) == 0, "memory", 0);
    uint8_t *out = NULL;
    size_t out_len = 0;
    const char *why = NULL;
    enum br_sasl_step st = br_scram_server_step(s, first, first_len, &out, &out_len, user,
                                                BR_SCRAM_USER_MAX + 1, &why);
    if (st != BR_SASL_CONTINUE) {
        fuzz_check(st == BR_SASL_FAILED && why != NULL && out == NULL, "a first step's end",
                   (int)st);
        br_scram_server_free(s);
        return 0;
    }
    check_printable(out, out_len);
    /* r= the client's nonce, as sent after "r=" in the first */
    const char *r = NULL;
    for (size_t i = 0; i + 3 <= first_len; i++) {
        if (memcmp(first + i, ",r=", 3) == 0) {
            r = (const char *)first + i + 3;
            break;
        }
    }
    fuzz_check(r != NULL, "a first without r= taken", 0);
    size_t cn = 0;
    while (r + cn < (const char *)first + first_len && r[cn] != ',') {
        cn++;
    }
    fuzz_check(out_len > cn + 2 && memcmp(out, "r=", 2) == 0 && memcmp(out + 2, r, cn) == 0,
               "server-first without the client's nonce", (int)out_len);
    char *mine = NULL;
    if (final == NULL) {
        const char *bare = memchr(first + 2, ',', first_len - 2);
        fuzz_check(bare != NULL, "a first without its gs2 header taken", 0);
        bare++;
        mine =
            client_final(bits, (const char *)first, (size_t)(bare - (const char *)first), bare,
                         first_len - (size_t)(bare - (const char *)first), out, out_len, password);
        final = (const uint8_t *)mine;
        final_len = strlen(mine);
    }
    kp_free(out);
    out = NULL;
    st = br_scram_server_step(s, final, final_len, &out, &out_len, user, BR_SCRAM_USER_MAX + 1,
                              &why);
    if (st == BR_SASL_DONE) {
        fuzz_check(out_len > 2 && memcmp(out, "v=", 2) == 0, "server-final without v=", 0);
        check_printable(out, out_len);
    } else {
        fuzz_check(st == BR_SASL_FAILED && why != NULL && out == NULL, "a final step's end",
                   (int)st);
    }
    kp_free(out);
    kp_free(mine);
    br_scram_server_free(s);
    return st;
}

static void fuzz_scram(int bits, const uint8_t *p, size_t n)
{
    if (n < 2) {
        return;
    }
    size_t first_len = fuzz_load_u16(p);
    if (first_len > n - 2) {
        first_len = n - 2;
    }
    const uint8_t *first = p + 2;
    char user[BR_SCRAM_USER_MAX + 1] = "";
    enum br_sasl_step st =
        exchange(bits, first, first_len, first + first_len, n - 2 - first_len, NULL, user);
    fuzz_check(st != BR_SASL_DONE, "a fuzzed client-final was accepted", 0);
    if (st == 0) {
        return; /* the first was refused: the computed final changes nothing */
    }
    st = exchange(bits, first, first_len, NULL, 0, PASSWORD, user);
    /* alice, her password: accepted; anyone else (unknown: fake salt) refused */
    /* the user is the bare message's first attribute, after the gs2 header
     * (the first was taken, so the header has its two commas) */
    const uint8_t *gs2_end = memchr(first + 2, ',', first_len - 2);
    fuzz_check(gs2_end != NULL, "a first without its gs2 header taken", 0);
    size_t bare_len = first_len - (size_t)(gs2_end + 1 - first);
    bool alice = bare_len >= 8 && memcmp(gs2_end + 1, "n=alice,", 8) == 0;
    fuzz_check(st == (alice ? BR_SASL_DONE : BR_SASL_FAILED),
               alice ? "alice's right proof refused" : "someone else accepted", (int)st);
    if (st == BR_SASL_DONE) {
        fuzz_check(strcmp(user, "alice") == 0, "DONE as someone else", 0);
        fuzz_check(exchange(bits, first, first_len, NULL, 0, "wrong", user) == BR_SASL_FAILED,
                   "a wrong password accepted", 0);
    }
}

static void fuzz_jaas(const uint8_t *p, size_t n)
{
    char *text = kp_malloc(n + 1);
    fuzz_check(text != NULL, "memory", 0);
    memcpy(text, p, n);
    text[n] = '\0';
    struct br_jaas j;
    char err[256];
    if (br_jaas_parse(text, &j, err, sizeof err) == 0) {
        fuzz_check(j.module != NULL && j.module[0] != '\0', "a module without a name", 0);
        for (size_t i = 0; i < j.n_options; i++) {
            fuzz_check(j.options[i].key[0] != '\0' && strpbrk(j.options[i].key, "= \t;\"") == NULL,
                       "a bad option key", (int)i);
        }
        struct br_plain_users *u = NULL;
        if (br_plain_users_new(&j, &u, err, sizeof err) == 0) {
            br_plain_users_free(u);
        }
    } else {
        fuzz_check(strncmp(err, "sasl.jaas.config: ", 18) == 0, "a message without the key", 0);
    }
    br_jaas_free(&j);
    kp_free(text);
}

static void fuzz_credential(int bits, const uint8_t *p, size_t n)
{
    struct br_scram_credential a;
    struct br_scram_credential b;
    const char *why = NULL;
    if (br_scram_credential_parse((const char *)p, n, bits, &a, &why) != 0) {
        fuzz_check(why != NULL, "a refusal without a reason", 0);
        return;
    }
    char text[BR_SCRAM_CREDENTIAL_MAX];
    br_scram_credential_format(bits, &a, text);
    fuzz_check(br_scram_credential_parse(text, strlen(text), bits, &b, &why) == 0,
               "a formatted credential does not parse", 0);
    size_t h = br_sasl_hash_len(bits);
    fuzz_check(a.salt_len == b.salt_len && memcmp(a.salt, b.salt, a.salt_len) == 0 &&
                   memcmp(a.stored_key, b.stored_key, h) == 0 &&
                   memcmp(a.server_key, b.server_key, h) == 0 && a.iterations == b.iterations,
               "format and parse do not agree", 0);
}

static void fuzz_znode(const uint8_t *p, size_t n)
{
    const uint8_t *nul = memchr(p, 0, n);
    size_t json_len = nul != NULL ? (size_t)(nul - p) : n;
    struct br_scram_store *s = NULL;
    fuzz_check(br_scram_store_new(&s) == 0, "memory", 0);
    const char *why = NULL;
    if (br_scram_store_set(s, "z", (const char *)p, json_len, &why) == 0) {
        struct br_scram_credential c;
        bool any =
            br_scram_store_find(s, 256, "z", 1, &c) || br_scram_store_find(s, 512, "z", 1, &c);
        fuzz_check(any == (br_scram_store_count(s) == 1), "the store and its count disagree", 0);
        const char *const listed[] = {"y", "z"};
        size_t before = br_scram_store_count(s);
        fuzz_check(br_scram_store_keep_only(s, listed, 2) == 0 && br_scram_store_count(s) == before,
                   "a listed user pruned", 0);
        fuzz_check(br_scram_store_keep_only(s, listed, 1) == before && br_scram_store_count(s) == 0,
                   "an unlisted user kept", 0);
        fuzz_check(br_scram_store_set(s, "z", NULL, 0, &why) == 0 && br_scram_store_count(s) == 0,
                   "a removal left the user", 0);
    }
    br_scram_store_free(s);
    if (nul != NULL) {
        const char *b64 = (const char *)nul + 1;
        size_t b64_len = n - json_len - 1;
        uint8_t buf[512];
        long got = br_b64_decode(b64, b64_len, buf, sizeof buf);
        if (got >= 0) {
            char again[700];
            size_t m = br_b64_encode(buf, (size_t)got, again);
            fuzz_check(m == b64_len && memcmp(again, b64, m) == 0, "base64 is not canonical", 0);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536) {
        return 0;
    }
    int bits = (data[0] & 0x80) != 0 ? 512 : 256;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    switch ((data[0] & 0x7f) % 5) {
    case 0:
        fuzz_plain(p, n);
        break;
    case 1:
        fuzz_scram(bits, p, n);
        break;
    case 2:
        fuzz_jaas(p, n);
        break;
    case 3:
        fuzz_credential(bits, p, n);
        break;
    default:
        fuzz_znode(p, n);
        break;
    }
    return 0;
}
