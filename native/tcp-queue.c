// How many octets a TCP socket's kernel send queue holds: written by the server and not yet
// acknowledged by the client (ioctl SIOCOUTQ, Linux). Node shows only what it has not handed to the
// kernel yet (writableLength), and the kernel takes several MB from a client that reads nothing, so
// this is what tells the TCP listener that a client has stopped taking its replies.
//
//   unacked(fd) -> octets, or -1 when the fd is no TCP socket (or is closed)

#define NAPI_VERSION 8
#include <node_api.h>

#include <linux/sockios.h>
#include <sys/ioctl.h>

static napi_value unacked(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], out;
  int32_t fd = -1;
  int queued = -1;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 1 || napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0 ||
      ioctl(fd, SIOCOUTQ, &queued) != 0)
    queued = -1;
  napi_create_int32(env, queued, &out);
  return out;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "unacked", NAPI_AUTO_LENGTH, unacked, NULL, &fn) != napi_ok) return NULL;
  napi_set_named_property(env, exports, "unacked", fn);
  return exports;
}
