/* fuzz_proto: libFuzzer target for the message decoder (sb_proto_decode).
 *
 * Any input must decode or be refused with a status and a reason, never
 * crash, leak or read out of bounds. A frame that decodes must encode again
 * and decode to the same bytes (the codec is one table: what it accepts it
 * can write). sb_proto_peek, which routes frames without decoding, must
 * agree with the decoder on the type of every frame the decoder accepts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    sb_msg_t msg;
    char reason[256];
    uint64_t version = 0;
    int peek_type = 0;
    uint64_t first = 0;
    int peeked = sb_proto_peek (data, size, &peek_type, &first);
    sb_proto_status_t st = sb_proto_decode (data, size, &msg, reason, sizeof reason, &version);
    if (st != SB_PROTO_OK) {
        if (msg.type != SB_MSG_NONE || !memchr (reason, '\0', sizeof reason) || !reason[0])
            abort ();   /* a refusal leaves no half message and always says why */
        return 0;
    }
    if (version == SB_PROTO_VERSION && (peeked != 0 || peek_type != (int) msg.type))
        abort ();
    uint8_t *again = NULL;
    size_t again_size = 0;
    if (sb_proto_encode (&msg, &again, &again_size) != 0)
        abort ();
    sb_msg_t msg2;
    if (sb_proto_decode (again, again_size, &msg2, reason, sizeof reason, NULL) != SB_PROTO_OK)
        abort ();
    uint8_t *third = NULL;
    size_t third_size = 0;
    if (sb_proto_encode (&msg2, &third, &third_size) != 0 || third_size != again_size
        || memcmp (third, again, again_size) != 0)
        abort ();
    free (third);
    free (again);
    sb_proto_fini (&msg2);
    sb_proto_fini (&msg);
    return 0;
}
