/* az_auth (lib/storage/azure/az_auth.h): connection strings, where the
 * endpoint and the credentials come from, HMAC-SHA256 against RFC 4231's
 * test vector, and the Shared Key string to sign (the whole signature is
 * checked against Azurite by tests/integration/test_azure.sh). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "az_auth.h"
#include "check_main.h"

static void
s_clear_env (void)
{
    unsetenv ("AZURE_STORAGE_CONNECTION_STRING");
    unsetenv ("AZURE_STORAGE_ACCOUNT");
    unsetenv ("AZURE_STORAGE_KEY");
    unsetenv ("AZURE_STORAGE_SAS_TOKEN");
}

START_TEST (test_connstr)
{
    const char *cs = "DefaultEndpointsProtocol=https;accountname=acct;AccountKey=ab==;;EndpointSuffix=core.windows.net";
    char v[64];
    ck_assert_int_eq (sb_az_connstr_get (cs, "AccountName", v, sizeof v), 0);
    ck_assert_str_eq (v, "acct");      /* names are case-insensitive */
    ck_assert_int_eq (sb_az_connstr_get (cs, "AccountKey", v, sizeof v), 0);
    ck_assert_str_eq (v, "ab==");      /* a value may hold '=' */
    ck_assert_int_eq (sb_az_connstr_get (cs, "BlobEndpoint", v, sizeof v), 1);
    ck_assert_int_eq (sb_az_connstr_get (cs, "Account", v, sizeof v), 1);   /* a whole name, not a prefix */
    ck_assert_int_eq (sb_az_connstr_get (cs, "EndpointSuffix", v, 4), -1);  /* does not fit */
}
END_TEST

/* RFC 4231, test case 2 */
START_TEST (test_hmac)
{
    char out[64];
    ck_assert_int_eq (sb_az_hmac_b64 ((const unsigned char *) "Jefe", 4, "what do ya want for nothing?", 28, out,
                                      sizeof out), 0);
    ck_assert_str_eq (out, "W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM=");
    ck_assert_int_eq (sb_az_hmac_b64 ((const unsigned char *) "Jefe", 4, "x", 1, out, 44), -1);
}
END_TEST

/* headers and query parameters sorted by name, the length empty for 0,
 * the account before the path (twice with an account in the path) */
START_TEST (test_string_to_sign)
{
    const char *qn[] = { "restype", "comp", "maxresults", "prefix" }, *qv[] = { "container", "list", "5", "a b/c" };
    const char *hn[] = { "x-ms-version", "x-ms-date", "x-ms-range" };
    const char *hv[] = { "2021-08-06", "Sun, 29 Nov 2026 15:00:00 GMT", "bytes=0-9" };
    sb_az_sign_req_t r = { .method = "GET", .path = "/devstoreaccount1/data", .qnames = qn, .qvalues = qv,
                           .nquery = 4, .hnames = hn, .hvalues = hv, .nheaders = 3 };
    char out[1024];
    ck_assert_int_eq (sb_az_string_to_sign (&r, "devstoreaccount1", out, sizeof out), 0);
    ck_assert_str_eq (out, "GET\n\n\n\n\n\n\n\n\n\n\n\n"
                           "x-ms-date:Sun, 29 Nov 2026 15:00:00 GMT\nx-ms-range:bytes=0-9\nx-ms-version:2021-08-06\n"
                           "/devstoreaccount1/devstoreaccount1/data\ncomp:list\nmaxresults:5\nprefix:a b/c\n"
                           "restype:container");
    r = (sb_az_sign_req_t) { .method = "PUT", .path = "/data/k%20y", .hnames = hn, .hvalues = hv, .nheaders = 2,
                             .content_length = 1234 };
    ck_assert_int_eq (sb_az_string_to_sign (&r, "acct", out, sizeof out), 0);
    ck_assert_str_eq (out, "PUT\n\n\n1234\n\n\n\n\n\n\n\n\n"
                           "x-ms-date:Sun, 29 Nov 2026 15:00:00 GMT\nx-ms-version:2021-08-06\n/acct/data/k%20y");
    ck_assert_int_eq (sb_az_string_to_sign (&r, "acct", out, 40), -1);
}
END_TEST

START_TEST (test_creds)
{
    s_clear_env ();
    sb_az_creds_t c;
    char err[512];
    ck_assert_int_eq (sb_az_creds_load (&c, err, sizeof err), -1);
    ck_assert_ptr_nonnull (strstr (err, "no Azure credentials"));
    /* the account key, decoded */
    setenv ("AZURE_STORAGE_CONNECTION_STRING", "AccountName=a1;AccountKey=SmVmZQ==;BlobEndpoint=http://h:1/a1", 1);
    ck_assert_int_eq (sb_az_creds_load (&c, err, sizeof err), 0);
    ck_assert_str_eq (c.account, "a1");
    ck_assert_uint_eq (c.key_len, 4);
    ck_assert_int_eq (memcmp (c.key, "Jefe", 4), 0);
    ck_assert_str_eq (c.sas, "");
    ck_assert_str_eq (c.source, "environment (AZURE_STORAGE_CONNECTION_STRING, AccountKey)");
    setenv ("AZURE_STORAGE_CONNECTION_STRING", "AccountName=a1;AccountKey=not*base64", 1);
    ck_assert_int_eq (sb_az_creds_load (&c, err, sizeof err), -1);
    ck_assert_str_eq (err, "AZURE_STORAGE_CONNECTION_STRING's AccountKey is not base64");   /* and not the value */
    setenv ("AZURE_STORAGE_CONNECTION_STRING", "AccountKey=SmVmZQ==", 1);
    ck_assert_int_eq (sb_az_creds_load (&c, err, sizeof err), -1);
    ck_assert_str_eq (err, "AZURE_STORAGE_CONNECTION_STRING has an AccountKey but no AccountName");
    setenv ("AZURE_STORAGE_CONNECTION_STRING", "BlobEndpoint=http://h:1/a1;SharedAccessSignature=sv=2019-12-12&sig=x%2B", 1);
    ck_assert_int_eq (sb_az_creds_load (&c, err, sizeof err), 0);
    ck_assert_str_eq (c.sas, "sv=2019-12-12&sig=x%2B");
    ck_assert_uint_eq (c.key_len, 0);
    setenv ("AZURE_STORAGE_CONNECTION_STRING", "UseDevelopmentStorage=true", 1);
    ck_assert_int_eq (sb_az_creds_load (&c, err, sizeof err), 0);
    ck_assert_str_eq (c.account, "devstoreaccount1");
    ck_assert_uint_eq (c.key_len, 64);
    /* the connection string first; then the account's variables */
    unsetenv ("AZURE_STORAGE_CONNECTION_STRING");
    setenv ("AZURE_STORAGE_ACCOUNT", "a2", 1);
    ck_assert_int_eq (sb_az_creds_load (&c, err, sizeof err), -1);
    ck_assert_str_eq (err, "AZURE_STORAGE_ACCOUNT is set but neither AZURE_STORAGE_KEY nor AZURE_STORAGE_SAS_TOKEN");
    setenv ("AZURE_STORAGE_SAS_TOKEN", "?sv=1&sig=y", 1);
    ck_assert_int_eq (sb_az_creds_load (&c, err, sizeof err), 0);
    ck_assert_str_eq (c.sas, "sv=1&sig=y");     /* the leading '?' dropped */
    ck_assert_str_eq (c.source, "environment (AZURE_STORAGE_ACCOUNT, AZURE_STORAGE_SAS_TOKEN)");
    setenv ("AZURE_STORAGE_KEY", "SmVmZQ==", 1);  /* a key wins over a token */
    ck_assert_int_eq (sb_az_creds_load (&c, err, sizeof err), 0);
    ck_assert_str_eq (c.sas, "");
    ck_assert_uint_eq (c.key_len, 4);
    sb_az_creds_wipe (&c);
    ck_assert_uint_eq (c.key_len, 0);
    ck_assert_int_eq (c.key[0], 0);
    s_clear_env ();
}
END_TEST

static Suite *
s_suite (void)
{
    Suite *s = suite_create ("az_auth");
    TCase *tc = tcase_create ("az_auth");
    tcase_add_test (tc, test_connstr);
    tcase_add_test (tc, test_hmac);
    tcase_add_test (tc, test_string_to_sign);
    tcase_add_test (tc, test_creds);
    suite_add_tcase (s, tc);
    return s;
}

SB_CHECK_MAIN (s_suite)
