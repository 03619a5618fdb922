/* az_auth: Azure Blob endpoints and credentials from the environment, and
 * Shared Key's string to sign. */
#include "az_auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int
sb_az_connstr_get (const char *connstr, const char *name, char *out, size_t size)
{
    size_t nlen = strlen (name);
    for (const char *p = connstr; p && *p;) {
        while (*p == ';' || *p == ' ')
            p++;
        const char *end = strchr (p, ';');
        size_t len = end ? (size_t) (end - p) : strlen (p);
        const char *eq = memchr (p, '=', len);
        if (eq && (size_t) (eq - p) == nlen && strncasecmp (p, name, nlen) == 0) {
            size_t vlen = len - nlen - 1;
            if (vlen >= size)
                return -1;
            memcpy (out, eq + 1, vlen);
            out[vlen] = '\0';
            return 0;
        }
        p = end ? end + 1 : NULL;
    }
    return 1;
}

static int
s_nonempty (const char *name)
{
    const char *v = getenv (name);
    return v && *v;
}

int
sb_az_endpoint_from_env (char *out, size_t size, char *err, size_t err_size)
{
    const char *cs = getenv ("AZURE_STORAGE_CONNECTION_STRING");
    char v[512], proto[16] = "https", account[256], suffix[256] = "core.windows.net";
    int n = -1;
    if (cs && *cs) {
        int rc = sb_az_connstr_get (cs, "BlobEndpoint", v, sizeof v);
        if (rc == 0 && v[0])
            n = snprintf (out, size, "%s", v);
        else if (sb_az_connstr_get (cs, "AccountName", account, sizeof account) == 0 && account[0]) {
            if (sb_az_connstr_get (cs, "DefaultEndpointsProtocol", v, sizeof v) == 0 && v[0])
                snprintf (proto, sizeof proto, "%s", v);
            if (sb_az_connstr_get (cs, "EndpointSuffix", v, sizeof v) == 0 && v[0])
                snprintf (suffix, sizeof suffix, "%s", v);
            n = snprintf (out, size, "%s://%s.blob.%s", proto, account, suffix);
        }
        else if (sb_az_connstr_get (cs, "UseDevelopmentStorage", v, sizeof v) == 0 && !strcasecmp (v, "true"))
            n = snprintf (out, size, "%s", SB_AZ_DEV_ENDPOINT);
        else {
            snprintf (err, err_size, "AZURE_STORAGE_CONNECTION_STRING has neither BlobEndpoint nor AccountName (nor"
                      " UseDevelopmentStorage=true): cannot tell the Blob endpoint");
            return -1;
        }
    }
    else if (s_nonempty ("AZURE_STORAGE_ACCOUNT"))
        n = snprintf (out, size, "https://%s.blob.core.windows.net", getenv ("AZURE_STORAGE_ACCOUNT"));
    else {
        snprintf (err, err_size, "no Azure Blob endpoint: give storage.endpoint_uris, or set"
                  " AZURE_STORAGE_CONNECTION_STRING (its BlobEndpoint, or AccountName) or AZURE_STORAGE_ACCOUNT");
        return -1;
    }
    if (n < 0 || (size_t) n >= size) {
        snprintf (err, err_size, "the Azure Blob endpoint from the environment is longer than %zu bytes", size - 1);
        return -1;
    }
    size_t len = strlen (out);
    while (len > 0 && out[len - 1] == '/')
        out[--len] = '\0';      /* the client adds '/' before the container */
    return 0;
}

/* Decode base64 key into c->key. 0 or -1. */
static int
s_key_decode (sb_az_creds_t *c, const char *b64)
{
    size_t len = strlen (b64);
    unsigned char tmp[sizeof c->key + 4];
    if (len == 0 || len % 4 != 0 || len / 4 * 3 > sizeof tmp)
        return -1;
    int n = EVP_DecodeBlock (tmp, (const unsigned char *) b64, (int) len);
    if (n < 0)
        return -1;
    /* EVP_DecodeBlock counts the padding's zero bytes */
    size_t pad = (b64[len - 1] == '=') + (len > 1 && b64[len - 2] == '=');
    c->key_len = (size_t) n - pad;
    memcpy (c->key, tmp, c->key_len);
    OPENSSL_cleanse (tmp, sizeof tmp);
    return 0;
}

static int
s_sas (sb_az_creds_t *c, const char *sas)
{
    while (*sas == '?')
        sas++;
    return snprintf (c->sas, sizeof c->sas, "%s", sas) < (int) sizeof c->sas ? 0 : -1;
}

int
sb_az_creds_load (sb_az_creds_t *c, char *err, size_t err_size)
{
    memset (c, 0, sizeof *c);
    const char *cs = getenv ("AZURE_STORAGE_CONNECTION_STRING");
    char v[4096];
    if (cs && *cs) {
        int dev = sb_az_connstr_get (cs, "UseDevelopmentStorage", v, sizeof v) == 0 && !strcasecmp (v, "true");
        if (sb_az_connstr_get (cs, "AccountName", c->account, sizeof c->account) != 0 && dev)
            snprintf (c->account, sizeof c->account, "%s", SB_AZ_DEV_ACCOUNT);
        int rc = sb_az_connstr_get (cs, "AccountKey", v, sizeof v);
        if (rc == 0 && v[0]) {
            if (!c->account[0]) {
                snprintf (err, err_size, "AZURE_STORAGE_CONNECTION_STRING has an AccountKey but no AccountName");
                return -1;
            }
            if (s_key_decode (c, v) != 0) {
                OPENSSL_cleanse (v, sizeof v);
                snprintf (err, err_size, "AZURE_STORAGE_CONNECTION_STRING's AccountKey is not base64");
                return -1;
            }
            OPENSSL_cleanse (v, sizeof v);
            snprintf (c->source, sizeof c->source, "environment (AZURE_STORAGE_CONNECTION_STRING, AccountKey)");
            return 0;
        }
        if (sb_az_connstr_get (cs, "SharedAccessSignature", v, sizeof v) == 0 && v[0]) {
            int bad = s_sas (c, v);
            OPENSSL_cleanse (v, sizeof v);
            if (bad) {
                snprintf (err, err_size, "AZURE_STORAGE_CONNECTION_STRING's SharedAccessSignature is too long");
                return -1;
            }
            snprintf (c->source, sizeof c->source, "environment (AZURE_STORAGE_CONNECTION_STRING, SharedAccessSignature)");
            return 0;
        }
        if (dev) {
            s_key_decode (c, SB_AZ_DEV_KEY);
            snprintf (c->source, sizeof c->source, "environment (AZURE_STORAGE_CONNECTION_STRING, UseDevelopmentStorage)");
            return 0;
        }
        snprintf (err, err_size, "AZURE_STORAGE_CONNECTION_STRING has neither AccountKey nor SharedAccessSignature");
        return -1;
    }
    if (!s_nonempty ("AZURE_STORAGE_ACCOUNT")) {
        snprintf (err, err_size, "no Azure credentials: set AZURE_STORAGE_CONNECTION_STRING (with AccountKey or"
                  " SharedAccessSignature), or AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN");
        return -1;
    }
    if (snprintf (c->account, sizeof c->account, "%s", getenv ("AZURE_STORAGE_ACCOUNT")) >= (int) sizeof c->account) {
        snprintf (err, err_size, "AZURE_STORAGE_ACCOUNT is too long");
        return -1;
    }
    if (s_nonempty ("AZURE_STORAGE_KEY")) {
        if (s_key_decode (c, getenv ("AZURE_STORAGE_KEY")) != 0) {
            snprintf (err, err_size, "AZURE_STORAGE_KEY is not base64");
            return -1;
        }
        snprintf (c->source, sizeof c->source, "environment (AZURE_STORAGE_ACCOUNT, AZURE_STORAGE_KEY)");
        return 0;
    }
    if (s_nonempty ("AZURE_STORAGE_SAS_TOKEN")) {
        if (s_sas (c, getenv ("AZURE_STORAGE_SAS_TOKEN")) != 0) {
            snprintf (err, err_size, "AZURE_STORAGE_SAS_TOKEN is too long");
            return -1;
        }
        snprintf (c->source, sizeof c->source, "environment (AZURE_STORAGE_ACCOUNT, AZURE_STORAGE_SAS_TOKEN)");
        return 0;
    }
    snprintf (err, err_size, "AZURE_STORAGE_ACCOUNT is set but neither AZURE_STORAGE_KEY nor AZURE_STORAGE_SAS_TOKEN");
    return -1;
}

void
sb_az_creds_wipe (sb_az_creds_t *c)
{
    OPENSSL_cleanse (c, sizeof *c);
}

int
sb_az_hmac_b64 (const unsigned char *key, size_t key_len, const char *msg, size_t msg_len, char *out, size_t size)
{
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    if (size < 45 || !HMAC (EVP_sha256 (), key, (int) key_len, (const unsigned char *) msg, msg_len, mac, &mac_len)
        || mac_len != 32)
        return -1;
    EVP_EncodeBlock ((unsigned char *) out, mac, 32);
    OPENSSL_cleanse (mac, sizeof mac);
    return 0;
}

static int
s_cmp_index (const void *a, const void *b, void *names)
{
    const char *const *n = names;
    return strcmp (n[*(const size_t *) a], n[*(const size_t *) b]);
}

/* indexes 0..n-1 of names in byte order (n is small: insertion sort) */
static void
s_order (const char *const *names, size_t n, size_t *idx)
{
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && s_cmp_index (&idx[j - 1], &idx[j], (void *) names) > 0; j--) {
            size_t t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
}

int
sb_az_string_to_sign (const sb_az_sign_req_t *req, const char *account, char *out, size_t size)
{
    size_t used = 0, idx[16];
    int n;
    if (req->nheaders > 16 || req->nquery > 16)
        return -1;
#define PUT(...) do { n = snprintf (out + used, size - used, __VA_ARGS__); \
                      if (n < 0 || (size_t) n >= size - used) { return -1; } \
                      used += (size_t) n; } while (0)
    char length[24] = "";
    if (req->content_length)
        snprintf (length, sizeof length, "%llu", req->content_length);
    /* VERB, Content-Encoding, -Language, -Length, -MD5, -Type, Date,
     * If-Modified-Since, If-Match, If-None-Match, If-Unmodified-Since,
     * Range: only the method and the length are ever sent (the date and
     * the range go as x-ms-date and x-ms-range, canonical headers) */
    PUT ("%s\n\n\n%s\n\n\n\n\n\n\n\n\n", req->method, length);
    s_order (req->hnames, req->nheaders, idx);
    for (size_t i = 0; i < req->nheaders; i++)
        PUT ("%s:%s\n", req->hnames[idx[i]], req->hvalues[idx[i]]);
    PUT ("/%s%s", account, req->path);
    s_order (req->qnames, req->nquery, idx);
    for (size_t i = 0; i < req->nquery; i++)
        PUT ("\n%s:%s", req->qnames[idx[i]], req->qvalues[idx[i]]);
#undef PUT
    return 0;
}
