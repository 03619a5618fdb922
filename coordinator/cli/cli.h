/* cli: the `shardbench` command line (run, datagen, report). */
#ifndef SB_CLI_H
#define SB_CLI_H

/* Run the command line; returns the process exit code (0 success, 1 run
 * failed, 2 usage or configuration error). argv[0] locates the worker. */
int sb_cli_main (int argc, char **argv);

#endif
