/* s3_creds: S3 credentials from this process's own environment.
 *
 * Order: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN),
 * then the profile AWS_PROFILE (default "default") of the shared credentials
 * file (AWS_SHARED_CREDENTIALS_FILE, default ~/.aws/credentials). Credentials
 * are never sent over the wire, stored or logged: only where they came from
 * is reported. */
#ifndef SB_S3_CREDS_H
#define SB_S3_CREDS_H

#include <stddef.h>

typedef struct {
    char access_key[128];
    char secret_key[256];
    char session_token[2048];   /* "" when none */
    char source[320];           /* "environment" or "FILE [profile]" */
} sb_s3_creds_t;

/* How to give a process credentials, for its errors: a workload file's
 * storage.storage_options credentials reach only the coordinator and the
 * workers it starts with --local (through their environment), never the
 * wire. */
#define SB_S3_CREDS_HOW "give this host AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the worker's environment," \
    " or a profile in ~/.aws/credentials (AWS_SHARED_CREDENTIALS_FILE, AWS_PROFILE); credentials in the workload" \
    " file reach only the coordinator and its --local workers, never the network"

/* Load credentials. Returns 0, or -1 with a reason in err naming what was
 * tried (never a secret). */
int sb_s3_creds_load (sb_s3_creds_t *creds, char *err, size_t err_size);

/* Overwrite the secrets in memory. */
void sb_s3_creds_wipe (sb_s3_creds_t *creds);

#endif
