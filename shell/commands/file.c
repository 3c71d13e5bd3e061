/* file.c — file(1) through libmagic, the library file itself uses: NAME:
 * TYPE lines with the names padded to one column, -b (no names), -i (MIME
 * type and charset), -L (follow symlinks); a file it cannot open is a line
 * of its own, status 0, as file's. */
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "shell/commands/commands-private.h"
#include "shell/commands/magic_dl.h"

static const struct option longopts[] = {
  { "brief", no_argument, NULL, 'b' },
  { "mime", no_argument, NULL, 'i' },
  { "dereference", no_argument, NULL, 'L' },
  { "no-dereference", no_argument, NULL, 'h' },
  { NULL, 0, NULL, 0 },
};

static int usage(BoxCmd *c)
{
  box_out_flush(c->out);
  box_fdprintf(c->err, "Usage: file [-bcCdEhikLlNnprsSvzZ0] [--apple] [--extension] "
                       "[--mime-encoding]\n"
                       "            [--mime-type] [-e <testname>] [-F <separator>]  [-f "
                       "<namefile>]\n"
                       "            [-m <magicfiles>] [-P <parameter=value>] [--exclude-quiet]\n"
                       "            <file> ...\n"
                       "       file -C [-m <magicfiles>]\n"
                       "       file [--help]\n");
  return 1;
}

/* The database a box's worker cannot open by name: mapped once through
 * the descriptor the zygote kept, and left mapped (libmagic reads it in
 * place). */
static int load_database(magic_t m)
{
  static void *map;
  static size_t size;
  int fd = box_dl_data_fd(&box_magic_dl);
  if (fd < 0) return magic_load(m, NULL);
  if (g_once_init_enter(&map)) {
    struct stat st;
    void *p = NULL;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
      p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
      size = (size_t)st.st_size;
    }
    g_once_init_leave(&map, p && p != MAP_FAILED ? p : (void *)MAP_FAILED);
  }
  if (map == MAP_FAILED) return -1;
  void *bufs[] = { map };
  size_t sizes[] = { size };
  return magic_load_buffers(m, bufs, sizes, 1);
}

int box_cmd_file(BoxCmd *c)
{
  bool brief = false, mime = false, follow = false;
  /* file's own error line, then its usage, not getopt's "Try" line */
  optind = 0;
  opterr = 0;
  int ch;
  while ((ch = getopt_long(c->argc, c->argv, "+biLh", longopts, NULL)) != -1) {
    switch (ch) {
    case 'b': brief = true; break;
    case 'i': mime = true; break;
    case 'L': follow = true; break;
    case 'h': follow = false; break;
    default:
      if (optopt)
        bx_err(c, "file", "invalid option -- '%c'", optopt);
      else
        bx_err(c, "file", "unrecognized option '%s'", c->argv[optind - 1]);
      return usage(c);
    }
  }
  if (optind >= c->argc) return usage(c);
  if (!(box_magic = box_dl_command(&box_magic_dl, c, "file"))) return 1;
  magic_t m = magic_open((mime ? MAGIC_MIME : MAGIC_NONE) | (follow ? MAGIC_SYMLINK : 0));
  if (!m || load_database(m) != 0) {
    bx_err(c, "file", "could not find any valid magic files!");
    if (m) magic_close(m);
    return 1;
  }
  size_t width = 0;
  for (int i = optind; i < c->argc; i++) width = MAX(width, strlen(c->argv[i]));
  for (int i = optind; i < c->argc; i++) {
    const char *name = c->argv[i];
    const char *type = magic_file(m, name);
    if (!type) type = magic_error(m);
    if (!brief) box_out_printf(c->out, "%s:%*s ", name, (int)(width - strlen(name)), "");
    box_out_printf(c->out, "%s\n", type ? type : "");
  }
  magic_close(m);
  return 0;
}
