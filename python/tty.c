/* tty.c — isatty(3) for libpython without a request to the mount.
 *
 * Why: io.open() asks every file it opens whether it is a terminal
 * (FileIO.isatty, to choose line buffering), and isatty's ioctl(TCGETS)
 * on a file of the mount is a round trip to boxd (FUSE_IOCTL: the kernel
 * forwards every ioctl a FUSE file gets, and remembers no refusal), one
 * per open(), as costly as the open itself.  A terminal is a character
 * device and an inode's type never changes, so the type the kernel already
 * holds answers first (statx with AT_STATX_DONT_SYNC: no request); only a
 * character device is asked with the ioctl.  The answer and errno are
 * isatty's (ENOTTY for any other open file; a bad descriptor goes to
 * isatty).  libpython's own calls (FileIO.isatty, os.isatty, the
 * interactive checks) are bound to this one by rewriting its relocation of
 * isatty, the slot its calls jump through. */
#include "python/python-private.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__)
#define SLOT_RELOC(t) ((t) == R_X86_64_JUMP_SLOT || (t) == R_X86_64_GLOB_DAT)
#elif defined(__aarch64__)
#define SLOT_RELOC(t) ((t) == R_AARCH64_JUMP_SLOT || (t) == R_AARCH64_GLOB_DAT)
#else
#define SLOT_RELOC(t) ((void)(t), 0) /* left to the C library's isatty */
#endif

/* The C library's isatty: where libpython is linked into the program,
 * the slot rewritten is also this file's own (set from it before). */
static int (*libc_isatty)(int) = isatty;

static int typed_isatty(int fd)
{
  struct statx sx;
  if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_TYPE, &sx) == 0 &&
      (sx.stx_mask & STATX_TYPE) && !S_ISCHR(sx.stx_mode)) {
    errno = ENOTTY;
    return 0;
  }
  return libc_isatty(fd);
}

/* A pointer the dynamic section holds: the loader has made most of them
 * absolute, not all loaders do. */
static uintptr_t dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) p)
{
  return p < info->dlpi_addr ? info->dlpi_addr + p : p;
}

static void patch_slot(const struct dl_phdr_info *info, uintptr_t slot)
{
  uintptr_t relro = 0, relro_end = 0;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
      relro = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
      relro_end = relro + info->dlpi_phdr[i].p_memsz;
    }
  uintptr_t page = slot & ~((uintptr_t)sysconf(_SC_PAGESIZE) - 1);
  size_t len = (size_t)(slot + sizeof(void *) - page);
  /* bound now (BIND_NOW): the slot is read-only after relocation */
  bool ro = slot >= relro && slot < relro_end;
  if (ro && mprotect((void *)page, len, PROT_READ | PROT_WRITE) != 0) return;
  int (*fn)(int) = typed_isatty, (*was)(int);
  memcpy(&was, (void *)slot, sizeof was);
  if (was != typed_isatty) libc_isatty = was;
  memcpy((void *)slot, &fn, sizeof fn);
  if (ro) mprotect((void *)page, len, PROT_READ);
}

static int patch_libpython(struct dl_phdr_info *info, size_t size, void *data)
{
  (void)size, (void)data;
#ifdef BOX_PYTHON_LINKED
  /* linked into the program (the first object): its other callers get
   * the same answers */
  if (info->dlpi_name[0] != '\0') return 0;
#else
  const char *slash = strrchr(info->dlpi_name, '/');
  if (strncmp(slash ? slash + 1 : info->dlpi_name, "libpython3", 10) != 0) return 0;
#endif
  const ElfW(Dyn) *dyn = NULL;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  if (!dyn) return 1;
  const ElfW(Sym) *syms = NULL;
  const char *strs = NULL;
  const ElfW(Rela) * tables[2] = { NULL, NULL };
  size_t sizes[2] = { 0, 0 };
  for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
    if (d->d_tag == DT_SYMTAB) syms = (const ElfW(Sym) *)dyn_ptr(info, d->d_un.d_ptr);
    if (d->d_tag == DT_STRTAB) strs = (const char *)dyn_ptr(info, d->d_un.d_ptr);
    if (d->d_tag == DT_JMPREL) tables[0] = (const ElfW(Rela) *)dyn_ptr(info, d->d_un.d_ptr);
    if (d->d_tag == DT_PLTRELSZ) sizes[0] = d->d_un.d_val;
    if (d->d_tag == DT_RELA) tables[1] = (const ElfW(Rela) *)dyn_ptr(info, d->d_un.d_ptr);
    if (d->d_tag == DT_RELASZ) sizes[1] = d->d_un.d_val;
  }
  if (!syms || !strs) return 1;
  for (int t = 0; t < 2; t++) {
    for (size_t i = 0; tables[t] && i < sizes[t] / sizeof(ElfW(Rela)); i++) {
      const ElfW(Rela) *r = &tables[t][i];
      size_t sym = ELF64_R_SYM(r->r_info);
      if (!SLOT_RELOC(ELF64_R_TYPE(r->r_info)) || sym == 0) continue;
      if (strcmp(strs + syms[sym].st_name, "isatty") == 0)
        patch_slot(info, info->dlpi_addr + r->r_offset);
    }
  }
  return 1;
}

void box_python_bind_isatty(void)
{
  static bool done;
  if (done) return;
  done = true;
  dl_iterate_phdr(patch_libpython, NULL);
}
