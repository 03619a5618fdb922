// s3rver 4.0.4 ships no bin/ file: tests/s3/s3lib.sh runs this with NODE_PATH=<npm cache>/node_modules.
require('@20minutes/s3rver/lib/cli.js').parseAsync(process.argv).catch((e) => { console.error(e); process.exit(1); });
