/* evil_coordinator: plays a coordinator that sends a worker object names
 * leading out of the data folder, to show that the worker checks what it
 * receives. Binds a ROUTER at ENDPOINT, takes one HELLO and answers:
 *   prefix  a WELCOME whose dataset.file_prefix is "../../escape"
 *   key     a sound WELCOME, then (after READY) a train PHASE_START and,
 *           for the first ENTRIES_REQ, an ENTRIES page naming "train/../../escape.npz"
 *   list    a sound WELCOME with reader.file_shuffle over DLIO-named files,
 *           then a train PHASE_START and, for the first LIST_REQ, a page of
 *           the rank's file list naming object 99 of the 4 listed
 * then prints every message it receives ("got TYPE", and for ERROR "ERROR
 * rank R op OP target T: MESSAGE") until the worker has gone quiet for 3 s,
 * and sends ABORT.
 *
 * usage: evil_coordinator ENDPOINT prefix|key|list DATA_ROOT
 * Exit status: 0 the exchange ran (what the worker did is in the output),
 * 1 no HELLO within 30 s, 2 usage or bind error. */
#include <czmq.h>
#include <stdio.h>
#include <string.h>

#include "proto.h"

static int
s_send (zsock_t *router, zframe_t *identity, sb_msg_t *m)
{
    uint8_t *data = NULL;
    size_t size = 0;
    if (sb_proto_encode (m, &data, &size) != 0)
        return -1;
    zmsg_t *z = zmsg_new ();
    zframe_t *id = zframe_dup (identity);
    if (!z || !id || zmsg_append (z, &id) != 0 || zmsg_addmem (z, data, size) != 0 || zmsg_send (&z, router) != 0) {
        zmsg_destroy (&z);
        zframe_destroy (&id);
        free (data);
        return -1;
    }
    free (data);
    return 0;
}

int
main (int argc, char **argv)
{
    if (argc != 4 || (strcmp (argv[2], "prefix") != 0 && strcmp (argv[2], "key") != 0
                      && strcmp (argv[2], "list") != 0)) {
        fprintf (stderr, "usage: evil_coordinator ENDPOINT prefix|key|list DATA_ROOT\n");
        return 2;
    }
    int list_mode = !strcmp (argv[2], "list");
    int key_mode = !strcmp (argv[2], "key") || list_mode;
    zsys_init ();
    zsys_set_logstream (NULL);
    zsock_t *router = zsock_new (ZMQ_ROUTER);
    if (!router || zsock_bind (router, "%s", argv[1]) < 0) {
        fprintf (stderr, "evil_coordinator: cannot bind %s: %s\n", argv[1], zmq_strerror (zmq_errno ()));
        zsock_destroy (&router);
        return 2;
    }
    printf ("listening\n");
    fflush (stdout);
    zsock_set_rcvtimeo (router, 30000);
    zframe_t *identity = NULL;
    int rc = 1, sent_keys = 0, sent_list = 0;
    for (;;) {
        zmsg_t *z = zmsg_recv (router);
        if (!z) {
            if (identity) {
                printf ("quiet\n");
                rc = 0;
            }
            else
                printf ("nothing came\n");
            break;
        }
        zframe_t *from = zmsg_pop (z), *frame = zmsg_first (z);
        sb_msg_t in = { 0 };
        char reason[256];
        if (!frame || sb_proto_decode (zframe_data (frame), zframe_size (frame), &in, reason, sizeof reason, NULL) != 0) {
            printf ("undecodable frame\n");
            zframe_destroy (&from);
            zmsg_destroy (&z);
            continue;
        }
        zmsg_destroy (&z);
        if (in.type != SB_MSG_HEARTBEAT && in.type != SB_MSG_STATS)
            printf ("got %s\n", sb_proto_type_name (in.type));
        sb_msg_t out = { 0 };
        if (in.type == SB_MSG_HELLO && !identity) {
            identity = zframe_dup (from);
            zsock_set_rcvtimeo (router, 3000);
            out.type = SB_MSG_WELCOME;
            sb_msg_welcome_t *w = &out.u.welcome;
            w->ranks = w->total_ranks = 1;
            w->heartbeat_ms = 1000;
            w->timeout_ms = 10000;
            w->num_files = 4;
            w->samples_per_file = 1;
            w->record_length = 4096;
            w->batch_size = w->read_threads = w->prefetch_size = 1;
            w->io_buffer = 1 << 20;
            w->keys_page = 256;
            w->max_in_flight = 1;
            w->connect_timeout_ms = w->request_timeout_ms = 5000;
            w->seed = 1;
            w->loader_threads = 1;
            if (list_mode) {     /* DLIO's index sampler with file_shuffle: the lists are served */
                w->file_shuffle = 1;
                w->sample_shuffle = 1;
            }
            if (sb_proto_set_str (&w->data_root, argv[3]) || sb_proto_set_str (&w->format, "npz")
                || sb_proto_set_str (&w->file_prefix, key_mode ? "img" : "../../escape")
                || sb_proto_set_str (&w->sync, "epoch") || sb_proto_set_str (&w->compute_dist, "constant")
                || sb_proto_set_str (&w->engine, "file") || sb_proto_set_str (&w->load_balance, "round_robin")
                || sb_proto_set_str (&w->store, "")
                || sb_proto_set_str (&w->parquet_columns, "")
                || sb_proto_set_str (&w->sampler, list_mode ? "dlio_index" : "global")
                || sb_proto_set_str (&w->trace, "")) {
                fprintf (stderr, "evil_coordinator: out of memory\n");
                return 2;
            }
        }
        else if (in.type == SB_MSG_READY && key_mode) {
            out.type = SB_MSG_PHASE_START;
            sb_msg_phase_start_t *p = &out.u.phase_start;
            p->epoch = 1;
            p->samples_per_rank = 4;
            p->batches = 4;
            p->listed = 4;     /* catalog_names 0, catalog_sizes 0: the worker asks */
            if (list_mode) {    /* DLIO's names and sizes: the worker derives them */
                p->catalog_names = 1;
                p->catalog_sizes = 1;
            }
            if (sb_proto_set_str (&p->phase, "train")) {
                fprintf (stderr, "evil_coordinator: out of memory\n");
                return 2;
            }
        }
        else if (in.type == SB_MSG_ENTRIES_REQ && !sent_keys) {
            sent_keys = 1;
            out.type = SB_MSG_ENTRIES;
            sb_msg_entries_t *k = &out.u.entries;
            size_t n = in.u.entries_req.indices.count;
            k->epoch = in.u.entries_req.epoch;
            k->seq = in.u.entries_req.seq;
            k->keys.items = calloc (n, sizeof (char *));
            k->sizes.items = calloc (n, sizeof (uint64_t));
            k->dlio.items = calloc (n, sizeof (uint64_t));
            if (!k->keys.items || !k->sizes.items || !k->dlio.items) {
                fprintf (stderr, "evil_coordinator: out of memory\n");
                return 2;
            }
            k->keys.count = k->sizes.count = k->dlio.count = n;
            for (size_t j = 0; j < n; j++) {
                k->sizes.items[j] = 4096;
                k->dlio.items[j] = UINT64_MAX;
                if (!(k->keys.items[j] = strdup ("train/../../escape.npz"))) {
                    fprintf (stderr, "evil_coordinator: out of memory\n");
                    return 2;
                }
            }
        }
        else if (in.type == SB_MSG_LIST_REQ && !sent_list) {
            sent_list = 1;
            out.type = SB_MSG_LIST;
            sb_msg_list_t *l = &out.u.list;
            l->epoch = in.u.list_req.epoch;
            l->rank = in.u.list_req.rank;
            l->page = in.u.list_req.page;
            if (!(l->files.items = calloc (4, sizeof (uint64_t)))) {
                fprintf (stderr, "evil_coordinator: out of memory\n");
                return 2;
            }
            l->files.count = 4;
            l->files.items[2] = 99;
        }
        else if (in.type == SB_MSG_ERROR) {
            printf ("ERROR rank %lld op %s target %s: %s\n", (long long) in.u.error.rank, in.u.error.op,
                    in.u.error.target, in.u.error.message);
        }
        if (out.type != SB_MSG_NONE && s_send (router, from, &out) != 0)
            printf ("cannot send %s\n", sb_proto_type_name (out.type));
        sb_proto_fini (&out);
        sb_proto_fini (&in);
        zframe_destroy (&from);
        fflush (stdout);
    }
    if (identity) {
        sb_msg_t abort_msg = { .type = SB_MSG_ABORT };
        if (sb_proto_set_str (&abort_msg.u.abort.reason, "evil_coordinator is done") == 0)
            s_send (router, identity, &abort_msg);
        sb_proto_fini (&abort_msg);
        zframe_destroy (&identity);
    }
    fflush (stdout);
    zsock_set_linger (router, 500);
    zsock_destroy (&router);
    return rc;
}
