/* s3_xml: element lookup and entity decoding for S3 replies. */
#include "s3_xml.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *
s_find (const char *hay, size_t len, const char *needle)
{
    size_t n = strlen (needle);
    if (n == 0 || n > len)
        return NULL;
    for (size_t i = 0; i + n <= len; i++)
        if (hay[i] == needle[0] && memcmp (hay + i, needle, n) == 0)
            return hay + i;
    return NULL;
}

/* Put one code point as UTF-8; returns bytes written or 0. */
static size_t
s_utf8 (unsigned long cp, char *out, size_t room)
{
    if (cp < 0x80 && room >= 1) { out[0] = (char) cp; return 1; }
    if (cp < 0x800 && room >= 2) { out[0] = (char) (0xc0 | (cp >> 6)); out[1] = (char) (0x80 | (cp & 0x3f)); return 2; }
    if (cp < 0x10000 && room >= 3) {
        out[0] = (char) (0xe0 | (cp >> 12)); out[1] = (char) (0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char) (0x80 | (cp & 0x3f)); return 3;
    }
    if (cp < 0x110000 && room >= 4) {
        out[0] = (char) (0xf0 | (cp >> 18)); out[1] = (char) (0x80 | ((cp >> 12) & 0x3f));
        out[2] = (char) (0x80 | ((cp >> 6) & 0x3f)); out[3] = (char) (0x80 | (cp & 0x3f)); return 4;
    }
    return 0;
}

static int
s_decode (const char *in, size_t len, char *out, size_t out_size)
{
    static const struct { const char *ent; char c; } ents[] = {
        { "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' }, { "&quot;", '"' }, { "&apos;", '\'' },
    };
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        if (o + 1 >= out_size)
            return -2;
        if (in[i] != '&') {
            out[o++] = in[i++];
            continue;
        }
        int done = 0;
        for (size_t e = 0; e < sizeof ents / sizeof ents[0]; e++) {
            size_t n = strlen (ents[e].ent);
            if (i + n <= len && memcmp (in + i, ents[e].ent, n) == 0) {
                out[o++] = ents[e].c;
                i += n;
                done = 1;
                break;
            }
        }
        if (done)
            continue;
        if (i + 3 < len && in[i + 1] == '#') {
            const char *semi = memchr (in + i, ';', len - i);
            if (semi) {
                char num[16];
                size_t nl = (size_t) (semi - (in + i + 2));
                if (nl > 0 && nl < sizeof num) {
                    memcpy (num, in + i + 2, nl);
                    num[nl] = '\0';
                    char *end = NULL;
                    unsigned long cp = num[0] == 'x' ? strtoul (num + 1, &end, 16) : strtoul (num, &end, 10);
                    if (end && *end == '\0') {
                        size_t w = s_utf8 (cp, out + o, out_size - o - 1);
                        if (!w)
                            return -2;
                        o += w;
                        i = (size_t) (semi - in) + 1;
                        continue;
                    }
                }
            }
        }
        out[o++] = in[i++];     /* a lone '&': keep it */
    }
    out[o] = '\0';
    return 0;
}

int
sb_s3_xml_next (const char *xml, size_t len, size_t *pos, const char *name, char *out, size_t out_size)
{
    char open[96], close[96];
    size_t nl = strlen (name);
    if (nl + 4 > sizeof open || out_size == 0 || *pos > len)
        return -1;
    memcpy (open + 1, name, nl);
    open[0] = '<';
    open[nl + 1] = '>';
    open[nl + 2] = '\0';
    close[0] = '<';
    close[1] = '/';
    memcpy (close + 2, name, nl);
    close[nl + 2] = '>';
    close[nl + 3] = '\0';
    const char *start = s_find (xml + *pos, len - *pos, open);
    if (!start)
        return -1;
    const char *text = start + nl + 2;
    const char *end = s_find (text, len - (size_t) (text - xml), close);
    if (!end)
        return -1;
    int rc = s_decode (text, (size_t) (end - text), out, out_size);
    if (rc != 0)
        return rc;
    *pos = (size_t) (end - xml) + nl + 3;
    return 0;
}

int
sb_s3_xml_find (const char *xml, size_t len, const char *name, char *out, size_t out_size)
{
    size_t pos = 0;
    return sb_s3_xml_next (xml, len, &pos, name, out, out_size);
}

int
sb_s3_xml_escape (const char *in, char *out, size_t out_size)
{
    size_t o = 0;
    for (const char *p = in; *p; p++) {
        const char *rep = NULL;
        switch (*p) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&apos;"; break;
        }
        size_t n = rep ? strlen (rep) : 1;
        if (o + n + 1 > out_size)
            return -1;
        if (rep)
            memcpy (out + o, rep, n);
        else
            out[o] = *p;
        o += n;
    }
    if (o >= out_size)
        return -1;
    out[o] = '\0';
    return 0;
}
