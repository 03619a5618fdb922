// s3rver 4.0.4 ships no bin/ file: tests/s3/s3lib.sh runs this with NODE_PATH=<npm cache>/node_modules.
// S3RVER_EXTRA_KEY=ACCESS_KEY_ID:SECRET in the environment adds a key pair that the server accepts
// besides S3RVER/S3RVER (tests/integration/test_secrets.sh uses a secret found nowhere else).
const extra = process.env.S3RVER_EXTRA_KEY;
if (extra && extra.includes(':')) {
  const at = extra.indexOf(':');
  require('@20minutes/s3rver/lib/models/account.js').DUMMY_ACCOUNT.createKeyPair(extra.slice(0, at), extra.slice(at + 1));
}
require('@20minutes/s3rver/lib/cli.js').parseAsync(process.argv).catch((e) => { console.error(e); process.exit(1); });
