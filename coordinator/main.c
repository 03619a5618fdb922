/* shardbench: the coordinator command. All logic lives in libcoordinator. */
#include "cli.h"

int
main (int argc, char **argv)
{
    return sb_cli_main (argc, argv);
}
