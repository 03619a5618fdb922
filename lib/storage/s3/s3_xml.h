/* s3_xml: the little XML that S3 answers with, read without a parser.
 *
 * S3 replies are flat documents (ListBucketResult, Error,
 * InitiateMultipartUploadResult). These helpers find elements by name in
 * order and decode the five predefined entities and numeric references.
 * They never allocate and never read past the given length. */
#ifndef SB_S3_XML_H
#define SB_S3_XML_H

#include <stddef.h>

/* Find the next <name>...</name> at or after *pos in xml[0..len). On
 * success copies the decoded text into out (NUL-terminated), advances *pos
 * past the closing tag and returns 0; returns -1 when absent, -2 when out is
 * too small. */
int sb_s3_xml_next (const char *xml, size_t len, size_t *pos, const char *name, char *out, size_t out_size);

/* First <name> anywhere in the document (pos 0). */
int sb_s3_xml_find (const char *xml, size_t len, const char *name, char *out, size_t out_size);

/* Escape text for an XML body (&, <, >, ", '). Returns 0 or -1. */
int sb_s3_xml_escape (const char *in, char *out, size_t out_size);

#endif
