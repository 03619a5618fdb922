/* s3_creds: environment, then the shared credentials file. */
#include "s3_creds.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *
s_trim (char *s)
{
    while (isspace ((unsigned char) *s))
        s++;
    size_t n = strlen (s);
    while (n && isspace ((unsigned char) s[n - 1]))
        s[--n] = '\0';
    return s;
}

static int
s_copy (char *dst, size_t size, const char *src)
{
    size_t n = strlen (src);
    if (n >= size)
        return -1;
    memcpy (dst, src, n + 1);
    return 0;
}

int
sb_s3_creds_load (sb_s3_creds_t *c, char *err, size_t err_size)
{
    memset (c, 0, sizeof *c);
    const char *id = getenv ("AWS_ACCESS_KEY_ID"), *secret = getenv ("AWS_SECRET_ACCESS_KEY");
    if (id && *id && secret && *secret) {
        const char *token = getenv ("AWS_SESSION_TOKEN");
        if (s_copy (c->access_key, sizeof c->access_key, id) != 0
            || s_copy (c->secret_key, sizeof c->secret_key, secret) != 0
            || (token && s_copy (c->session_token, sizeof c->session_token, token) != 0)) {
            snprintf (err, err_size, "AWS credentials in the environment are too long");
            sb_s3_creds_wipe (c);
            return -1;
        }
        snprintf (c->source, sizeof c->source, "environment");
        return 0;
    }
    const char *profile = getenv ("AWS_PROFILE");
    if (!profile || !*profile)
        profile = "default";
    char path[256];
    const char *file = getenv ("AWS_SHARED_CREDENTIALS_FILE");
    if (file && *file)
        snprintf (path, sizeof path, "%s", file);
    else
        snprintf (path, sizeof path, "%s/.aws/credentials", getenv ("HOME") ? getenv ("HOME") : "");
    FILE *f = fopen (path, "r");
    if (!f) {
        snprintf (err, err_size,
                  "no S3 credentials: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY are not set and %s cannot be read (%s);"
                  " %s", path, strerror (errno), SB_S3_CREDS_HOW);
        return -1;
    }
    char line[4096];
    int in_profile = 0;
    while (fgets (line, sizeof line, f)) {
        char *s = s_trim (line);
        if (*s == '#' || *s == ';' || !*s)
            continue;
        if (*s == '[') {
            char *end = strchr (s, ']');
            if (end)
                *end = '\0';
            char *name = s_trim (s + 1);
            if (strncmp (name, "profile ", 8) == 0)
                name = s_trim (name + 8);
            in_profile = strcmp (name, profile) == 0;
            continue;
        }
        char *eq = strchr (s, '=');
        if (!in_profile || !eq)
            continue;
        *eq = '\0';
        char *key = s_trim (s), *value = s_trim (eq + 1);
        int rc = 0;
        if (strcmp (key, "aws_access_key_id") == 0)
            rc = s_copy (c->access_key, sizeof c->access_key, value);
        else if (strcmp (key, "aws_secret_access_key") == 0)
            rc = s_copy (c->secret_key, sizeof c->secret_key, value);
        else if (strcmp (key, "aws_session_token") == 0)
            rc = s_copy (c->session_token, sizeof c->session_token, value);
        if (rc != 0) {
            snprintf (err, err_size, "%s [%s]: %s is too long", path, profile, key);
            fclose (f);
            sb_s3_creds_wipe (c);
            return -1;
        }
    }
    memset (line, 0, sizeof line);
    fclose (f);
    if (!c->access_key[0] || !c->secret_key[0]) {
        snprintf (err, err_size, "no S3 credentials: environment not set and %s has no complete profile [%s]; %s",
                  path, profile, SB_S3_CREDS_HOW);
        sb_s3_creds_wipe (c);
        return -1;
    }
    snprintf (c->source, sizeof c->source, "%s [%s]", path, profile);
    return 0;
}

void
sb_s3_creds_wipe (sb_s3_creds_t *c)
{
    volatile char *p = (volatile char *) c;
    for (size_t i = 0; i < offsetof (sb_s3_creds_t, source); i++)
        p[i] = 0;
}
