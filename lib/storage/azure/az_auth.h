/* az_auth: where an Azure Blob account is and how requests to it are
 * authorized, from the environment of the process that opens a client.
 *
 * The endpoint (sb_az_endpoint_from_env) may go into the workload's storage
 * configuration, which is sent to workers; the credentials
 * (sb_az_creds_load) never do: each host reads its own environment when it
 * opens a client, and they live only in the client's memory. */
#ifndef SB_AZ_AUTH_H
#define SB_AZ_AUTH_H

#include <stddef.h>

/* The account key of Azurite's (and the old storage emulator's) published
 * test account devstoreaccount1: a well-known value, not a secret. */
#define SB_AZ_DEV_ACCOUNT "devstoreaccount1"
#define SB_AZ_DEV_KEY "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
#define SB_AZ_DEV_ENDPOINT "http://127.0.0.1:10000/" SB_AZ_DEV_ACCOUNT

typedef struct {
    char          account[256];
    unsigned char key[128];     /* the decoded account key (SharedKey); key_len 0: none */
    size_t        key_len;
    char          sas[4096];    /* a SAS token without its leading '?'; "" when none */
    char          source[128];  /* where they came from, for sb_storage_credentials_source */
} sb_az_creds_t;

/* The value of name (case-insensitive) in a connection string
 * ("Name=value;Name=value", a value may hold '=') into out. 0, 1 when
 * absent, -1 when it does not fit. */
int sb_az_connstr_get (const char *connstr, const char *name, char *out, size_t size);

/* The Blob endpoint from the environment, into out: the connection
 * string's BlobEndpoint, else DefaultEndpointsProtocol://AccountName.blob.
 * EndpointSuffix, else Azurite's for UseDevelopmentStorage=true, else
 * https://$AZURE_STORAGE_ACCOUNT.blob.core.windows.net. 0, or -1 with err
 * saying what to set. */
int sb_az_endpoint_from_env (char *out, size_t size, char *err, size_t err_size);

/* Credentials from the environment: AZURE_STORAGE_CONNECTION_STRING's
 * AccountName with AccountKey or SharedAccessSignature, else
 * AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN.
 * 0, or -1 with err saying what to set (never a credential's value). */
int sb_az_creds_load (sb_az_creds_t *c, char *err, size_t err_size);
/* Zero the secrets. */
void sb_az_creds_wipe (sb_az_creds_t *c);

/* Base64 of HMAC-SHA256 (key, msg) into out (45 bytes at least). 0 or -1. */
int sb_az_hmac_b64 (const unsigned char *key, size_t key_len, const char *msg, size_t msg_len, char *out,
                    size_t size);

/* One request as Shared Key signs it (Microsoft's "Authorize with Shared
 * Key", Blob service, version 2015-02-21 and later). */
typedef struct {
    const char *method;             /* GET, HEAD, PUT, DELETE */
    const char *path;               /* the URL's path as sent (percent-encoded), account path included */
    const char *const *qnames;      /* query parameters, values not encoded */
    const char *const *qvalues;
    size_t      nquery;
    const char *const *hnames;      /* the x-ms-* headers sent, lower case */
    const char *const *hvalues;
    size_t      nheaders;
    unsigned long long content_length;  /* of the body; 0 signs as "" */
} sb_az_sign_req_t;

/* The string to sign of req for account into out. 0, or -1 when it does not fit. */
int sb_az_string_to_sign (const sb_az_sign_req_t *req, const char *account, char *out, size_t size);

#endif
