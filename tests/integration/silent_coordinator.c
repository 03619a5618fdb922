/* silent_coordinator: plays a coordinator that takes a worker's HELLO and
 * goes away without answering (one closing after its run, or killed): binds
 * a ROUTER at ENDPOINT, waits up to 30 s for one message, prints its type
 * and exits, closing every connection.
 *
 * usage: silent_coordinator ENDPOINT
 * Exit status: 0 a message came, 1 none within 30 s, 2 usage or bind error. */
#include <czmq.h>
#include <stdio.h>

#include "proto.h"

int
main (int argc, char **argv)
{
    if (argc != 2) {
        fprintf (stderr, "usage: silent_coordinator ENDPOINT\n");
        return 2;
    }
    zsys_init ();
    zsys_set_logstream (NULL);
    zsock_t *router = zsock_new (ZMQ_ROUTER);
    if (!router || zsock_bind (router, "%s", argv[1]) < 0) {
        fprintf (stderr, "silent_coordinator: cannot bind %s: %s\n", argv[1], zmq_strerror (zmq_errno ()));
        zsock_destroy (&router);
        return 2;
    }
    printf ("listening\n");
    fflush (stdout);
    zsock_set_rcvtimeo (router, 30000);
    zmsg_t *m = zmsg_recv (router);    /* [identity, frame] */
    int rc = 1;
    if (m && zmsg_size (m) == 2) {
        zframe_t *frame = zmsg_last (m);
        int type = 0;
        uint64_t first = 0;
        if (sb_proto_peek (zframe_data (frame), zframe_size (frame), &type, &first) == 0)
            printf ("took %s\n", sb_proto_type_name (type));
        else
            printf ("took a frame of another protocol\n");
        rc = 0;
    }
    else
        printf ("nothing came\n");
    zmsg_destroy (&m);
    zsock_set_linger (router, 0);
    zsock_destroy (&router);
    return rc;
}
