/* ctl.h — the channel between boxd and its Shell workers.
 *
 * One SOCK_SEQPACKET socket per worker: each message is one JSON object,
 * optionally carrying descriptors (SCM_RIGHTS).  A request that expects a
 * reply carries its own reply socket as its first descriptor, so forked
 * pipeline stages of one worker can ask concurrently without mixing answers.
 */
#ifndef BOX_CTL_H
#define BOX_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "shell/shell.h"

#define BOX_CTL_MAX_MSG (2 * 1024 * 1024)
/* 64: the fast path hands back a batch of descriptors in one reply */
#define BOX_CTL_MAX_FDS 64

/* Sends obj with nfds descriptors. Returns false (errno set) on failure. */
bool box_ctl_send(int sock, json_object *obj, const int *fds, int nfds);
/* Receives one message.  Returns NULL on EOF or a malformed message
 * (errno 0 for EOF).  Received descriptors go to fds (O_CLOEXEC), their
 * count to *nfds; extra descriptors are closed. */
json_object *box_ctl_recv(int sock, int *fds, int *nfds);
/* The same two, on the message's text as it travels (len bytes of JSON;
 * received: NUL-terminated, in the calling thread's buffer until its next
 * receive).  For a caller that must touch no more memory than the message:
 * the zygote, all of whose pages each fork shares copy-on-write. */
bool box_ctl_send_text(int sock, const char *text, size_t len, const int *fds, int nfds);
const char *box_ctl_recv_text(int sock, int *fds, int *nfds);
/* box_ctl_recv_text for a packet that may hold NULs (a listing's records):
 * its length in *len. */
const char *box_ctl_recv_packet(int sock, int *fds, int *nfds, size_t *len);
/* Sends a request with a fresh reply socket and waits for the answer. */
json_object *box_ctl_call(int sock, json_object *request, const int *fds, int nfds);
/* As box_ctl_call, keeping the descriptors of the reply (up to
 * BOX_CTL_MAX_FDS in out_fds, their count in *out_n). */
json_object *box_ctl_call_fds(int sock, json_object *request, const int *fds, int nfds,
                              int *out_fds, int *out_n);

/* The fast path's own channel (box/fastopen.c): a SOCK_SEQPACKET socket a
 * worker process hands boxd once ({"op":"open-channel"}, its end as the
 * descriptor) and then asks its "open"s on, one message each way, with no
 * reply socket made, passed and closed per request.  A request is the cwd
 * (possibly empty), a NUL, and each path NUL-terminated; the answer is one
 * BoxOpenWire per path, then their messages' bytes in order, with the
 * descriptors of the BOX_OPEN_WIRE_FD answers attached in order.  The
 * sender's credentials travel with each request (SO_PASSCRED), as the
 * mount sees each caller's own.  A request whose first byte is
 * BOX_LIST_WIRE_TAG (never a cwd's) lists a directory instead: the tag, the
 * cwd, a NUL, the path, a NUL; answered as {"op":"list"} is (box-private.h),
 * one message for a directory of up to 32 KiB of records: a find's listing
 * is then one message each way, like an open. */
#define BOX_LIST_WIRE_TAG '\001'
#define BOX_OPEN_WIRE_MAX (256 * 1024)
#define BOX_OPEN_WIRE_PATHS 32 /* most paths in one request */
enum { BOX_OPEN_WIRE_FALLBACK, BOX_OPEN_WIRE_ERR, BOX_OPEN_WIRE_FD };
typedef struct {
  int32_t kind; /* BOX_OPEN_WIRE_* */
  int32_t err;  /* BOX_OPEN_WIRE_ERR's errno */
  uint32_t message_len;
} BoxOpenWire;

/* The shell:exec request a worker sends for cmd (op "decide", its input,
 * args and literal flags).  boxd builds the same one when it decides a
 * command's first shell:exec itself (worker_command.c), so both sides log and
 * compare the very same fields. */
json_object *box_ctl_exec_input(const BoxShellCommand *cmd);
json_object *box_ctl_exec_request(const BoxShellCommand *cmd);

#endif
