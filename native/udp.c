// The batched UDP engine: a UDP socket that reads up to BATCH datagrams per wake-up with one
// recvmmsg(2) and sends a batch of replies with one sendmmsg(2). No DNS here: JavaScript gets the
// datagrams of one wake-up in one call and hands back the replies of the whole batch in one call.
//
// Memory is shared with JavaScript, which allocates it (sizes from the exported constants):
//   recv      BATCH slots of SLOT bytes; datagram i is at i * SLOT
//   recvMeta  Uint32Array, META words per datagram: length, then the peer (PEER words, below)
//   send      the reply bytes of one batch, back to back
//   sendMeta  Uint32Array, SEND_META words per reply: offset in send, length, then the peer
// A peer is PEER words: port, family (4 or 6), IPv6 scope id, the 16 address bytes in network order
// (an IPv4 address in the first 4); then the local side of the exchange: family (0 when unknown),
// interface index, and the 16 address bytes the query was sent to.
//
// A socket bound to a wildcard address (0.0.0.0, ::) asks the kernel for each datagram's destination
// (IP_PKTINFO, IPV6_RECVPKTINFO) and sends the reply from it (RFC 2181 4.1): left to the route, the
// source of a reply to a query sent to a host's second address is its first, and a client whose socket
// is connected to the address it asked (dig, glibc, musl) never sees the reply.
//
// Waiting is libuv's: a uv_poll_t on the socket, so the event loop wakes for it like for any socket.
// Replies the kernel cannot take now (EAGAIN: the socket's send buffer is full) are copied to a
// backlog, sent when the socket turns writable, in order; past BACKLOG_BYTES they are dropped and
// counted, as a router would drop them (the client asks again).

#define NAPI_VERSION 8
#include <node_api.h>
#include <uv.h>

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BATCH 64
// Any UDP payload fits (65507 octets over IPv4, 65527 over IPv6), so a datagram reaches JavaScript
// whole as it does through dgram. Pages of a slot are only touched as far as datagrams reach.
#define SLOT 65536
#define PEER (7 + 6)
#define META (1 + PEER)
#define SEND_META (2 + PEER)
#define SEND_BYTES (BATCH * 2048)
#define BACKLOG_BYTES (1 << 20)
// SO_RCVBUF asked for, as the dgram engine asks (src/server/udp.ts RECEIVE_BUFFER); the kernel grants
// at most net.core.rmem_max.
#define RECEIVE_BUFFER (4 << 20)
// Room for the one packet-info control message a datagram carries either way.
#define CONTROL (CMSG_SPACE(sizeof(struct in6_pktinfo)) + CMSG_SPACE(sizeof(struct in_pktinfo)))

typedef struct pending {
  struct pending *next;
  struct sockaddr_storage addr;
  socklen_t addrlen;
  size_t controllen;
  uint8_t control[CONTROL];
  uint32_t len;
  uint8_t data[];
} pending;

typedef struct {
  napi_env env;
  uv_poll_t poll;
  int fd;
  int family;
  int events;
  int closing;
  int closed;
  int finalized;
  int env_gone;
  // Bound to a wildcard address: replies are sent from each query's destination.
  int pktinfo;
  napi_ref self;
  napi_ref on_batch;
  napi_ref on_close;
  napi_ref buffers[4];
  napi_async_context async;
  napi_async_cleanup_hook_handle cleanup;
  uint8_t *recv;
  uint32_t *recv_meta;
  uint8_t *send;
  uint32_t *send_meta;
  struct mmsghdr rmsg[BATCH];
  struct iovec riov[BATCH];
  struct sockaddr_storage raddr[BATCH];
  uint8_t rcontrol[BATCH][CONTROL];
  struct mmsghdr smsg[BATCH];
  struct iovec siov[BATCH];
  struct sockaddr_storage saddr[BATCH];
  uint8_t scontrol[BATCH][CONTROL];
  pending *backlog;
  pending *backlog_tail;
  size_t backlog_bytes;
  double dropped;
  double send_errors;
} udp_socket;

#define CHECK(call)                                                                                        \
  do {                                                                                                     \
    if ((call) != napi_ok) return throw_last(env);                                                         \
  } while (0)

static napi_value throw_last(napi_env env) {
  const napi_extended_error_info *info = NULL;
  napi_get_last_error_info(env, &info);
  bool pending_exc = false;
  napi_is_exception_pending(env, &pending_exc);
  if (!pending_exc) napi_throw_error(env, "CDNS_ERR_NATIVE", info && info->error_message ? info->error_message : "napi call failed");
  return NULL;
}

// An Error as libuv-backed Node sockets throw them: "bind EADDRINUSE 0.0.0.0:53", code "EADDRINUSE",
// with the address and port as properties.
static napi_value throw_errno(napi_env env, const char *syscall, int err, const char *address, int port) {
  char msg[160];
  const char *code = uv_err_name(-err);
  if (address != NULL) snprintf(msg, sizeof msg, "%s %s %s:%d", syscall, code, address, port);
  else snprintf(msg, sizeof msg, "%s %s", syscall, code);
  napi_value code_v, msg_v, error;
  napi_create_string_utf8(env, code, NAPI_AUTO_LENGTH, &code_v);
  napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &msg_v);
  napi_create_error(env, code_v, msg_v, &error);
  napi_value errno_v, syscall_v;
  napi_create_int32(env, -err, &errno_v);
  napi_create_string_utf8(env, syscall, NAPI_AUTO_LENGTH, &syscall_v);
  napi_set_named_property(env, error, "errno", errno_v);
  napi_set_named_property(env, error, "syscall", syscall_v);
  if (address != NULL) {
    napi_value address_v, port_v;
    napi_create_string_utf8(env, address, NAPI_AUTO_LENGTH, &address_v);
    napi_create_int32(env, port, &port_v);
    napi_set_named_property(env, error, "address", address_v);
    napi_set_named_property(env, error, "port", port_v);
  }
  napi_throw(env, error);
  return NULL;
}

static void free_backlog(udp_socket *s) {
  for (pending *p = s->backlog; p != NULL;) {
    pending *next = p->next;
    free(p);
    p = next;
  }
  s->backlog = s->backlog_tail = NULL;
  s->backlog_bytes = 0;
}

static void release(udp_socket *s) {
  napi_env env = s->env;
  napi_ref *refs[] = {&s->self, &s->on_batch, &s->on_close, &s->buffers[0], &s->buffers[1], &s->buffers[2], &s->buffers[3]};
  for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
    if (*refs[i] != NULL) napi_delete_reference(env, *refs[i]);
    *refs[i] = NULL;
  }
  if (s->async != NULL) napi_async_destroy(env, s->async);
  s->async = NULL;
}

// ---- peers: sockaddr <-> the PEER words JavaScript reads and writes ----

static void peer_out(const struct sockaddr_storage *a, uint32_t *w) {
  memset(w + 3, 0, 16);
  if (a->ss_family == AF_INET6) {
    const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)a;
    w[0] = ntohs(a6->sin6_port);
    w[1] = 6;
    w[2] = a6->sin6_scope_id;
    memcpy(w + 3, &a6->sin6_addr, 16);
  } else {
    const struct sockaddr_in *a4 = (const struct sockaddr_in *)a;
    w[0] = ntohs(a4->sin_port);
    w[1] = 4;
    w[2] = 0;
    memcpy(w + 3, &a4->sin_addr, 4);
  }
}

static socklen_t peer_in(const uint32_t *w, struct sockaddr_storage *a) {
  memset(a, 0, sizeof *a);
  if (w[1] == 6) {
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)a;
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons((uint16_t)w[0]);
    a6->sin6_scope_id = w[2];
    memcpy(&a6->sin6_addr, w + 3, 16);
    return sizeof *a6;
  }
  struct sockaddr_in *a4 = (struct sockaddr_in *)a;
  a4->sin_family = AF_INET;
  a4->sin_port = htons((uint16_t)w[0]);
  memcpy(&a4->sin_addr, w + 3, 4);
  return sizeof *a4;
}

// The local words of a received datagram, from its packet-info control message: family 0 when there
// is none (a socket bound to one address) or the destination was a multicast group.
static void local_out(struct msghdr *h, uint32_t *w) {
  memset(w, 0, 6 * 4);
  for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c != NULL; c = CMSG_NXTHDR(h, c)) {
    if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
      struct in_pktinfo pi;
      memcpy(&pi, CMSG_DATA(c), sizeof pi);
      // ipi_spec_dst: the local address a reply goes out from (ipi_addr, the header's destination,
      // may be a broadcast address).
      w[0] = 4;
      w[1] = (uint32_t)pi.ipi_ifindex;
      memcpy(w + 2, &pi.ipi_spec_dst, 4);
    } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
      struct in6_pktinfo pi;
      memcpy(&pi, CMSG_DATA(c), sizeof pi);
      if (IN6_IS_ADDR_MULTICAST(&pi.ipi6_addr)) continue;
      w[0] = 6;
      w[1] = pi.ipi6_ifindex;
      memcpy(w + 2, &pi.ipi6_addr, 16);
    }
  }
}

// The control message that sends a reply from the local words' address, into buf; its length (0:
// none, the route chooses). An IPv6 link-local source needs its interface; any other goes where the
// route to the client says.
static size_t control_in(const uint32_t *w, int family, uint8_t *buf) {
  if (w[0] == 0) return 0;
  memset(buf, 0, CONTROL);
  struct msghdr h = {.msg_control = buf, .msg_controllen = CONTROL};
  struct cmsghdr *c = CMSG_FIRSTHDR(&h);
  if (w[0] == 4 && family == AF_INET) {
    struct in_pktinfo pi;
    memset(&pi, 0, sizeof pi);
    memcpy(&pi.ipi_spec_dst, w + 2, 4);
    c->cmsg_level = IPPROTO_IP;
    c->cmsg_type = IP_PKTINFO;
    c->cmsg_len = CMSG_LEN(sizeof pi);
    memcpy(CMSG_DATA(c), &pi, sizeof pi);
    return CMSG_SPACE(sizeof pi);
  }
  if (w[0] == 6 && family == AF_INET6) {
    struct in6_pktinfo pi;
    memset(&pi, 0, sizeof pi);
    memcpy(&pi.ipi6_addr, w + 2, 16);
    if (IN6_IS_ADDR_LINKLOCAL(&pi.ipi6_addr)) pi.ipi6_ifindex = w[1];
    c->cmsg_level = IPPROTO_IPV6;
    c->cmsg_type = IPV6_PKTINFO;
    c->cmsg_len = CMSG_LEN(sizeof pi);
    memcpy(CMSG_DATA(c), &pi, sizeof pi);
    return CMSG_SPACE(sizeof pi);
  }
  return 0;
}

// ---- sending ----

static void set_events(udp_socket *s, int events) {
  if (s->closing || events == s->events) return;
  s->events = events;
  uv_poll_start(&s->poll, events, NULL);
}

static void to_backlog(udp_socket *s, const struct mmsghdr *m) {
  uint32_t len = (uint32_t)m->msg_hdr.msg_iov[0].iov_len;
  if (s->backlog_bytes + len > BACKLOG_BYTES) {
    s->dropped++;
    return;
  }
  pending *p = malloc(sizeof *p + len);
  if (p == NULL) {
    s->dropped++;
    return;
  }
  p->next = NULL;
  memcpy(&p->addr, m->msg_hdr.msg_name, m->msg_hdr.msg_namelen);
  p->addrlen = m->msg_hdr.msg_namelen;
  p->controllen = m->msg_hdr.msg_controllen;
  if (p->controllen > 0) memcpy(p->control, m->msg_hdr.msg_control, p->controllen);
  p->len = len;
  memcpy(p->data, m->msg_hdr.msg_iov[0].iov_base, len);
  if (s->backlog_tail != NULL) s->backlog_tail->next = p;
  else s->backlog = p;
  s->backlog_tail = p;
  s->backlog_bytes += len;
}

// Outgoing message n: these bytes to this address, from the address `control` names (when controllen).
static void out_msg(udp_socket *s, int n, void *data, size_t len, void *addr, socklen_t addrlen, void *control,
                    size_t controllen) {
  s->siov[n].iov_base = data;
  s->siov[n].iov_len = len;
  memset(&s->smsg[n], 0, sizeof s->smsg[n]);
  s->smsg[n].msg_hdr.msg_name = addr;
  s->smsg[n].msg_hdr.msg_namelen = addrlen;
  s->smsg[n].msg_hdr.msg_iov = &s->siov[n];
  s->smsg[n].msg_hdr.msg_iovlen = 1;
  s->smsg[n].msg_hdr.msg_control = controllen > 0 ? control : NULL;
  s->smsg[n].msg_hdr.msg_controllen = controllen;
}

// Sends msgs[0..n); returns how many were dealt with (sent, or failed for good and counted) before
// the kernel said EAGAIN.
static int send_all(udp_socket *s, struct mmsghdr *msgs, int n) {
  int done = 0;
  while (done < n) {
    int r = sendmmsg(s->fd, msgs + done, (unsigned)(n - done), 0);
    if (r > 0) {
      done += r;
    } else if (r < 0 && errno == EINTR) {
      continue;
    } else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) {
      break;
    } else {
      // This one reply cannot be sent (an address the route refuses, say): skip it, keep the rest.
      s->send_errors++;
      done++;
    }
  }
  return done;
}

static void flush_backlog(udp_socket *s) {
  while (s->backlog != NULL) {
    int n = 0;
    pending *p = s->backlog;
    for (; p != NULL && n < BATCH; p = p->next, n++) {
      out_msg(s, n, p->data, p->len, &p->addr, p->addrlen, p->control, p->controllen);
    }
    int done = send_all(s, s->smsg, n);
    for (int i = 0; i < done; i++) {
      pending *next = s->backlog->next;
      s->backlog_bytes -= s->backlog->len;
      free(s->backlog);
      s->backlog = next;
    }
    if (s->backlog == NULL) s->backlog_tail = NULL;
    if (done < n) return;
  }
}

// ---- receiving ----

static void call_js(udp_socket *s, napi_ref fn_ref, napi_value arg) {
  napi_env env = s->env;
  napi_value self, fn;
  if (napi_get_reference_value(env, s->self, &self) != napi_ok || self == NULL) return;
  if (napi_get_reference_value(env, fn_ref, &fn) != napi_ok || fn == NULL) return;
  napi_value ignored;
  if (napi_make_callback(env, s->async, self, fn, arg == NULL ? 0 : 1, &arg, &ignored) != napi_ok) {
    // A throw out of the callback is an uncaught exception, as it would be from any socket's handler.
    bool pending_exc = false;
    napi_is_exception_pending(env, &pending_exc);
    if (pending_exc) {
      napi_value err;
      napi_get_and_clear_last_exception(env, &err);
      napi_fatal_exception(env, err);
    }
  }
}

// Reads one batch with recvmmsg and hands it to JavaScript; returns how many datagrams it read
// (negative: -errno).
static int read_batch(udp_socket *s) {
  for (int i = 0; i < BATCH; i++) {
    s->rmsg[i].msg_hdr.msg_namelen = sizeof s->raddr[i];
    s->rmsg[i].msg_hdr.msg_flags = 0;
    s->rmsg[i].msg_hdr.msg_control = s->pktinfo ? s->rcontrol[i] : NULL;
    s->rmsg[i].msg_hdr.msg_controllen = s->pktinfo ? CONTROL : 0;
  }
  int n;
  do n = recvmmsg(s->fd, s->rmsg, BATCH, MSG_DONTWAIT, NULL);
  while (n < 0 && errno == EINTR);
  if (n < 0) n = errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
  for (int i = 0; i < n; i++) {
    uint32_t *m = s->recv_meta + i * META;
    m[0] = s->rmsg[i].msg_len;
    peer_out(&s->raddr[i], m + 1);
    local_out(&s->rmsg[i].msg_hdr, m + 1 + 7);
  }
  // A negative count is an error (-errno), reported as dgram reports socket errors.
  if (n != 0) {
    napi_value count;
    napi_create_int32(s->env, n, &count);
    call_js(s, s->on_batch, count);
  }
  return n;
}

static void on_poll(uv_poll_t *handle, int status, int events) {
  udp_socket *s = handle->data;
  if (s->closing) return;
  napi_handle_scope scope;
  if (napi_open_handle_scope(s->env, &scope) != napi_ok) return;
  if (status < 0) {
    napi_value code;
    napi_create_int32(s->env, status, &code);
    call_js(s, s->on_batch, code);
  } else {
    if (events & UV_WRITABLE) {
      flush_backlog(s);
      if (s->backlog == NULL) set_events(s, UV_READABLE);
    }
    if (events & UV_READABLE) read_batch(s);
  }
  napi_close_handle_scope(s->env, scope);
}

// ---- closing ----

static void on_closed(uv_handle_t *handle) {
  udp_socket *s = handle->data;
  close(s->fd);
  s->fd = -1;
  s->closed = 1;
  free_backlog(s);
  if (s->cleanup != NULL) {
    napi_remove_async_cleanup_hook(s->cleanup);
    s->cleanup = NULL;
  }
  if (s->env_gone) {
    // The environment's references went with it (on_env_cleanup).
  } else if (s->on_close != NULL) {
    napi_handle_scope scope;
    if (napi_open_handle_scope(s->env, &scope) == napi_ok) {
      call_js(s, s->on_close, NULL);
      napi_close_handle_scope(s->env, scope);
    }
  }
  if (!s->env_gone) release(s);
  if (s->finalized) free(s);
}

static void start_close(udp_socket *s) {
  if (s->closing) return;
  s->closing = 1;
  if (s->fd < 0) {
    // Never bound: nothing is polled.
    s->closed = 1;
    return;
  }
  uv_poll_stop(&s->poll);
  uv_close((uv_handle_t *)&s->poll, on_closed);
}

// The environment is going away (a worker thread ends) with the socket open: close it, so its loop
// can close.
static void on_env_cleanup(napi_async_cleanup_hook_handle handle, void *arg) {
  udp_socket *s = arg;
  (void)handle;
  // Node-API's own teardown may run before the close completes: let go of everything now.
  release(s);
  s->env_gone = 1;
  start_close(s);
}

static void finalize(napi_env env, void *data, void *hint) {
  udp_socket *s = data;
  (void)env;
  (void)hint;
  if (s->closing && !s->closed) s->finalized = 1;
  else {
    if (!s->closing && s->fd >= 0) close(s->fd);
    free(s);
  }
}

// ---- the JavaScript side ----

static udp_socket *unwrap(napi_env env, napi_callback_info info, size_t *argc, napi_value *argv) {
  napi_value self;
  void *data = NULL;
  if (napi_get_cb_info(env, info, argc, argv, &self, NULL) != napi_ok) return NULL;
  if (napi_unwrap(env, self, &data) != napi_ok) {
    napi_throw_type_error(env, "CDNS_ERR_NATIVE", "not a UdpSocket");
    return NULL;
  }
  return data;
}

static bool bytes_of(napi_env env, napi_value v, size_t want, void **data) {
  bool is_typed = false;
  napi_is_typedarray(env, v, &is_typed);
  size_t len = 0;
  if (is_typed) {
    napi_typedarray_type type;
    size_t elements, offset;
    napi_value ab;
    if (napi_get_typedarray_info(env, v, &type, &elements, data, &ab, &offset) != napi_ok) return false;
    len = elements * (type == napi_uint32_array ? 4 : 1);
    if (type != napi_uint32_array && type != napi_uint8_array) return false;
  }
  return is_typed && len >= want;
}

// new UdpSocket(recv, recvMeta, send, sendMeta, onBatch(count))
static napi_value construct(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5], self;
  CHECK(napi_get_cb_info(env, info, &argc, argv, &self, NULL));
  udp_socket *s = calloc(1, sizeof *s);
  if (s == NULL) {
    napi_throw_error(env, "CDNS_ERR_NATIVE", "out of memory");
    return NULL;
  }
  s->env = env;
  s->fd = -1;
  const size_t want[4] = {BATCH * SLOT, BATCH * META * 4, SEND_BYTES, BATCH * SEND_META * 4};
  void **ptrs[4] = {(void **)&s->recv, (void **)&s->recv_meta, (void **)&s->send, (void **)&s->send_meta};
  for (int i = 0; i < 4; i++) {
    if (argc < 5 || !bytes_of(env, argv[i], want[i], ptrs[i])) {
      free(s);
      napi_throw_type_error(env, "CDNS_ERR_NATIVE", "UdpSocket: shared buffers too small");
      return NULL;
    }
  }
  napi_valuetype t;
  napi_typeof(env, argv[4], &t);
  if (t != napi_function) {
    free(s);
    napi_throw_type_error(env, "CDNS_ERR_NATIVE", "UdpSocket: onBatch must be a function");
    return NULL;
  }
  for (int i = 0; i < 4; i++) napi_create_reference(env, argv[i], 1, &s->buffers[i]);
  napi_create_reference(env, argv[4], 1, &s->on_batch);
  for (int i = 0; i < BATCH; i++) {
    s->riov[i].iov_base = s->recv + (size_t)i * SLOT;
    s->riov[i].iov_len = SLOT;
    s->rmsg[i].msg_hdr.msg_name = &s->raddr[i];
    s->rmsg[i].msg_hdr.msg_iov = &s->riov[i];
    s->rmsg[i].msg_hdr.msg_iovlen = 1;
  }
  if (napi_wrap(env, self, s, finalize, NULL, NULL) != napi_ok) {
    release(s);
    free(s);
    return throw_last(env);
  }
  return self;
}

// bind(address, port, reusePort) -> { address, port }: the socket, bound and polled for reading.
static napi_value bind_socket(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  udp_socket *s = unwrap(env, info, &argc, argv);
  if (s == NULL) return NULL;
  if (s->fd >= 0 || s->closing) {
    napi_throw_error(env, "ERR_SOCKET_ALREADY_BOUND", "Socket is already bound");
    return NULL;
  }
  char address[INET6_ADDRSTRLEN + IF_NAMESIZE + 2] = {0};
  size_t alen = 0;
  int32_t port = 0;
  bool reuse_port = false;
  CHECK(napi_get_value_string_utf8(env, argv[0], address, sizeof address, &alen));
  CHECK(napi_get_value_int32(env, argv[1], &port));
  CHECK(napi_get_value_bool(env, argv[2], &reuse_port));

  struct sockaddr_storage sa;
  memset(&sa, 0, sizeof sa);
  socklen_t salen;
  int family;
  if (uv_ip6_addr(address, port, (struct sockaddr_in6 *)&sa) == 0 && strchr(address, ':') != NULL) {
    family = AF_INET6;
    salen = sizeof(struct sockaddr_in6);
  } else if (uv_ip4_addr(address, port, (struct sockaddr_in *)&sa) == 0) {
    family = AF_INET;
    salen = sizeof(struct sockaddr_in);
  } else {
    napi_throw_type_error(env, "ERR_INVALID_IP_ADDRESS", "bind: not an IP address");
    return NULL;
  }

  int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return throw_errno(env, "bind", errno, address, port);
  int on = 1;
  int rcvbuf = RECEIVE_BUFFER;
  // Best effort: a smaller buffer than asked is no reason not to serve.
  (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  // As dgram's reuseAddr, reusePort and ipv6Only do for the dgram engine.
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
      (reuse_port && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) != 0) ||
      (family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on) != 0) ||
      bind(fd, (struct sockaddr *)&sa, salen) != 0) {
    int err = errno;
    close(fd);
    return throw_errno(env, "bind", err, address, port);
  }
  struct sockaddr_storage local;
  socklen_t llen = sizeof local;
  if (getsockname(fd, (struct sockaddr *)&local, &llen) != 0) {
    int err = errno;
    close(fd);
    return throw_errno(env, "getsockname", err, NULL, 0);
  }
  uv_loop_t *loop;
  CHECK(napi_get_uv_event_loop(env, &loop));
  int r = uv_poll_init(loop, &s->poll, fd);
  if (r == 0) {
    s->poll.data = s;
    s->events = UV_READABLE;
    r = uv_poll_start(&s->poll, UV_READABLE, on_poll);
  }
  if (r != 0) {
    close(fd);
    return throw_errno(env, "uv_poll_start", -r, NULL, 0);
  }
  s->fd = fd;
  s->family = family;
  // A wildcard address: every datagram's destination is asked for, to answer from it.
  int any = family == AF_INET6 ? IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&sa)->sin6_addr)
                               : ((struct sockaddr_in *)&sa)->sin_addr.s_addr == htonl(INADDR_ANY);
  if (any) {
    s->pktinfo = family == AF_INET6 ? setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &on, sizeof on) == 0
                                    : setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &on, sizeof on) == 0;
  }
  // Alive while open: the poll calls back into this object.
  napi_value self;
  napi_get_cb_info(env, info, NULL, NULL, &self, NULL);
  napi_create_reference(env, self, 1, &s->self);
  napi_value resource;
  napi_create_string_utf8(env, "clusterdns:udp", NAPI_AUTO_LENGTH, &resource);
  napi_async_init(env, NULL, resource, &s->async);
  napi_add_async_cleanup_hook(env, on_env_cleanup, s, &s->cleanup);

  char text[INET6_ADDRSTRLEN + 1] = {0};
  int local_port;
  if (family == AF_INET6) {
    uv_ip6_name((struct sockaddr_in6 *)&local, text, sizeof text);
    local_port = ntohs(((struct sockaddr_in6 *)&local)->sin6_port);
  } else {
    uv_ip4_name((struct sockaddr_in *)&local, text, sizeof text);
    local_port = ntohs(((struct sockaddr_in *)&local)->sin_port);
  }
  napi_value out, addr_v, port_v;
  napi_create_object(env, &out);
  napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &addr_v);
  napi_create_int32(env, local_port, &port_v);
  napi_set_named_property(env, out, "address", addr_v);
  napi_set_named_property(env, out, "port", port_v);
  return out;
}

// send(count): sends the first `count` replies described in sendMeta with one sendmmsg.
static napi_value send_batch(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  udp_socket *s = unwrap(env, info, &argc, argv);
  if (s == NULL) return NULL;
  int32_t count = 0;
  CHECK(napi_get_value_int32(env, argv[0], &count));
  if (s->fd < 0 || s->closing || count <= 0) return NULL;
  if (count > BATCH) count = BATCH;
  int n = 0;
  for (int i = 0; i < count; i++) {
    const uint32_t *m = s->send_meta + i * SEND_META;
    if ((uint64_t)m[0] + m[1] > SEND_BYTES) {
      s->send_errors++;
      continue;
    }
    size_t controllen = s->pktinfo ? control_in(m + 2 + 7, s->family, s->scontrol[n]) : 0;
    out_msg(s, n, s->send + m[0], m[1], &s->saddr[n], peer_in(m + 2, &s->saddr[n]), s->scontrol[n], controllen);
    n++;
  }
  // Behind a backlog, new replies queue after it: the kernel has no room yet.
  int done = s->backlog == NULL ? send_all(s, s->smsg, n) : 0;
  for (int i = done; i < n; i++) to_backlog(s, &s->smsg[i]);
  if (s->backlog != NULL) set_events(s, UV_READABLE | UV_WRITABLE);
  return NULL;
}

// close(callback): stops reading, closes the socket, then calls back.
static napi_value close_socket(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  udp_socket *s = unwrap(env, info, &argc, argv);
  if (s == NULL) return NULL;
  if (s->closing) return NULL;
  if (argc >= 1) {
    napi_valuetype t;
    napi_typeof(env, argv[0], &t);
    if (t == napi_function) napi_create_reference(env, argv[0], 1, &s->on_close);
  }
  // What the socket holds is read and answered first, and the socket let go of at once after:
  // datagrams still queued when it closes are dropped, and with SO_REUSEPORT the processes sharing
  // the port only get what arrives after it is gone (a rolling restart lost 11-17 queries at 5k QPS
  // this way, issue 25). libuv closes the descriptor only in a later phase of the loop, so a fresh
  // unbound socket takes its number now (dup2), which leaves libuv a harmless one to close. Bounded:
  // a flood cannot hold the close.
  if (s->fd >= 0) {
    for (int round = 0; round < 16; round++) {
      if (read_batch(s) < BATCH) break;
    }
    int spare = socket(s->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (spare >= 0) {
      dup2(spare, s->fd);
      close(spare);
    }
  }
  start_close(s);
  if (s->closed && s->on_close != NULL) {
    // Never bound: call back at once.
    napi_value self, fn, ignored;
    napi_get_cb_info(env, info, NULL, NULL, &self, NULL);
    napi_get_reference_value(env, s->on_close, &fn);
    napi_call_function(env, self, fn, 0, NULL, &ignored);
    release(s);
  }
  return NULL;
}

// stats() -> { dropped, sendErrors, backlog }: replies lost to a full backlog, replies the kernel
// refused, and bytes waiting for the socket to turn writable.
static napi_value stats(napi_env env, napi_callback_info info) {
  size_t argc = 0;
  udp_socket *s = unwrap(env, info, &argc, NULL);
  if (s == NULL) return NULL;
  napi_value out, dropped, errors, backlog;
  napi_create_object(env, &out);
  napi_create_double(env, s->dropped, &dropped);
  napi_create_double(env, s->send_errors, &errors);
  napi_create_double(env, (double)s->backlog_bytes, &backlog);
  napi_set_named_property(env, out, "dropped", dropped);
  napi_set_named_property(env, out, "sendErrors", errors);
  napi_set_named_property(env, out, "backlog", backlog);
  return out;
}

// leave(): takes the socket out of its SO_REUSEPORT group before it closes. Connected (here to its
// own address, which sends it nothing), a UDP socket matches no client's datagram, and the kernel's
// choice within the group skips connected members, so new queries go to the processes that share the
// port while what this socket already holds can still be read and answered. A close alone drops the
// datagrams queued in it. Replies still name their client (sendmmsg with an address).
static napi_value leave_group(napi_env env, napi_callback_info info) {
  size_t argc = 0;
  udp_socket *s = unwrap(env, info, &argc, NULL);
  if (s == NULL || s->fd < 0) return NULL;
  struct sockaddr_storage self;
  socklen_t len = sizeof self;
  if (getsockname(s->fd, (struct sockaddr *)&self, &len) == 0) (void)connect(s->fd, (struct sockaddr *)&self, len);
  return NULL;
}

static napi_value constant(napi_env env, int32_t v) {
  napi_value out;
  napi_create_int32(env, v, &out);
  return out;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor methods[] = {
      {"bind", NULL, bind_socket, NULL, NULL, NULL, napi_default, NULL},
      {"send", NULL, send_batch, NULL, NULL, NULL, napi_default, NULL},
      {"close", NULL, close_socket, NULL, NULL, NULL, napi_default, NULL},
      {"stats", NULL, stats, NULL, NULL, NULL, napi_default, NULL},
      {"leave", NULL, leave_group, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_value cls;
  if (napi_define_class(env, "UdpSocket", NAPI_AUTO_LENGTH, construct, NULL, 5, methods, &cls) != napi_ok) return NULL;
  napi_set_named_property(env, exports, "UdpSocket", cls);
  napi_set_named_property(env, exports, "BATCH", constant(env, BATCH));
  napi_set_named_property(env, exports, "SLOT", constant(env, SLOT));
  napi_set_named_property(env, exports, "PEER", constant(env, PEER));
  napi_set_named_property(env, exports, "META", constant(env, META));
  napi_set_named_property(env, exports, "SEND_META", constant(env, SEND_META));
  napi_set_named_property(env, exports, "SEND_BYTES", constant(env, SEND_BYTES));
  return exports;
}
