/* refusals.c — what seccomp refuses a contained process, observed
 * (spec/runtime.md §5.8, §8.4): each launch hands boxd the listener of its
 * observed filter, and one thread here answers every notification with
 * EPERM (never letting the call go on) and records it for the targets that
 * take `kernel`.  A launch the kernel gave no listener runs the plain
 * filter, and the run says once that its refusals go unobserved. */
#include "box/box-private.h"
#include "tools/filter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

struct BoxRefusals {
  BoxTelemetry *telemetry;
  int epoll_fd;
  int wake_fd;
  bool stopping;
  gint unobserved_said;
  GThread *thread;
  GMutex lock;
  GArray *listeners; /* int: every listener still held; lock */
  size_t notif_size, resp_size;
};

/* A file of /proc/<pid>, or NULL. */
static char *proc_read(int pid, const char *name, gsize *len)
{
  g_autofree char *path = g_strdup_printf("/proc/%d/%s", pid, name);
  char *text = NULL;
  if (!g_file_get_contents(path, &text, len, NULL)) return NULL;
  return text;
}

static void answer(BoxRefusals *r, int fd)
{
  g_autofree struct seccomp_notif *req = g_malloc0(r->notif_size);
  if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, req) != 0) return; /* the caller is gone */
  /* read while the caller waits on us, so the pid still names it */
  g_autofree char *exe_link = g_strdup_printf("/proc/%d/exe", (int)req->pid);
  g_autofree char *exe = g_file_read_link(exe_link, NULL);
  gsize len = 0;
  g_autofree char *cmdline = proc_read((int)req->pid, "cmdline", &len);
  bool valid = ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) == 0;
  g_autofree struct seccomp_notif_resp *resp = g_malloc0(r->resp_size);
  resp->id = req->id;
  resp->error = -EPERM;
  if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, resp) != 0 || !valid) return;
  GPtrArray *args = g_ptr_array_new();
  for (gsize i = 0; cmdline && i < len; i += strlen(cmdline + i) + 1)
    g_ptr_array_add(args, cmdline + i);
  g_ptr_array_add(args, NULL);
  uint64_t call_args[6];
  memcpy(call_args, req->data.args, sizeof call_args);
  g_autofree char *arguments = NULL;
  g_autofree char *name = box_seccomp_describe(req->data.arch, req->data.nr, call_args, &arguments);
  BoxTelemetryRefusal rec = {
    .syscall = name,
    .arguments = arguments,
    .error_name = "EPERM",
    .pid = (int)req->pid,
    .executable = exe,
    .args = (const char *const *)args->pdata,
  };
  box_telemetry_kernel(r->telemetry, &rec);
  g_ptr_array_free(args, TRUE);
}

static void forget(BoxRefusals *r, int fd)
{
  epoll_ctl(r->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
  g_mutex_lock(&r->lock);
  boxd_array_remove_int(r->listeners, fd);
  g_mutex_unlock(&r->lock);
  close(fd);
}

static gpointer refusals_thread(gpointer data)
{
  BoxRefusals *r = data;
  while (!__atomic_load_n(&r->stopping, __ATOMIC_ACQUIRE)) {
    struct epoll_event ev[16];
    /* a second at most: the rate limit's windows end on time */
    int n = epoll_wait(r->epoll_fd, ev, G_N_ELEMENTS(ev), 1000);
    for (int i = 0; i < n; i++) {
      int fd = ev[i].data.fd;
      if (fd == r->wake_fd) continue;
      if (ev[i].events & EPOLLIN)
        answer(r, fd);
      else if (ev[i].events & (EPOLLHUP | EPOLLERR))
        forget(r, fd); /* every process under its filter has ended */
    }
    box_telemetry_kernel_tick(r->telemetry);
  }
  return NULL;
}

static void take(void *data, int listener, int install_errno)
{
  BoxRefusals *r = data;
  if (listener < 0) {
    if (g_atomic_int_compare_and_exchange(&r->unobserved_said, 0, 1)) {
      g_autofree char *detail = g_strdup_printf(
        "the kernel gave no seccomp listener (%s): refused calls fail with EPERM unrecorded",
        g_strerror(install_errno));
      box_telemetry_control(r->telemetry, "refusals_unobserved", "seccomp",
                            strerrorname_np(install_errno), detail);
    }
    return;
  }
  g_mutex_lock(&r->lock);
  g_array_append_val(r->listeners, listener);
  g_mutex_unlock(&r->lock);
  struct epoll_event ev = { .events = EPOLLIN, .data.fd = listener };
  if (epoll_ctl(r->epoll_fd, EPOLL_CTL_ADD, listener, &ev) != 0) forget(r, listener);
}

void boxd_refusals_start(Boxd *d)
{
  struct seccomp_notif_sizes sizes;
  if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0) {
    take(&(BoxRefusals){ .telemetry = d->telemetry }, -1, errno);
    return;
  }
  BoxRefusals *r = g_new0(BoxRefusals, 1);
  r->telemetry = d->telemetry;
  r->notif_size = MAX(sizes.seccomp_notif, sizeof(struct seccomp_notif));
  r->resp_size = MAX(sizes.seccomp_notif_resp, sizeof(struct seccomp_notif_resp));
  r->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  r->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  r->listeners = g_array_new(FALSE, FALSE, sizeof(int));
  g_mutex_init(&r->lock);
  struct epoll_event ev = { .events = EPOLLIN, .data.fd = r->wake_fd };
  if (r->epoll_fd < 0 || r->wake_fd < 0 ||
      epoll_ctl(r->epoll_fd, EPOLL_CTL_ADD, r->wake_fd, &ev) != 0) {
    take(r, -1, errno);
    boxd_refusals_stop(r);
    return;
  }
  r->thread = g_thread_new("box-refusals", refusals_thread, r);
  d->refusals = r;
  box_tools_set_refusals(take, r);
}

void boxd_refusals_stop(BoxRefusals *r)
{
  if (!r) return;
  box_tools_set_refusals(NULL, NULL);
  if (r->thread) {
    __atomic_store_n(&r->stopping, true, __ATOMIC_RELEASE);
    uint64_t one = 1;
    if (write(r->wake_fd, &one, sizeof one) < 0) { /* the thread ends within a second anyway */
    }
    g_thread_join(r->thread);
  }
  for (guint i = 0; i < r->listeners->len; i++) close(g_array_index(r->listeners, int, i));
  g_array_free(r->listeners, TRUE);
  if (r->epoll_fd >= 0) close(r->epoll_fd);
  if (r->wake_fd >= 0) close(r->wake_fd);
  g_mutex_clear(&r->lock);
  g_free(r);
}
