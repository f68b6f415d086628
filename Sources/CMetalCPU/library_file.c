// Checking a kernel library file before dlopen (pm_host.h). The dynamic loader
// maps a shared object's segments as its headers describe them; a segment that
// extends past the end of a truncated file is mapped all the same, and the
// first access to it (relocation, a constructor) is SIGBUS: the process dies.
// So the file must hold everything its headers describe. dlopen of a FIFO or a
// device would block or read forever: only regular files are loaded.
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pm_host.h"

static int read_at(int fd, void *buf, size_t size, uint64_t offset) {
    size_t got = 0;
    while (got < size) {
        ssize_t n = pread(fd, (char *)buf + got, size - got, (off_t)(offset + got));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        got += (size_t)n;
    }
    return 0;
}

// Whether [offset, offset + size) lies within a file of `file` bytes (no overflow).
static int within(uint64_t offset, uint64_t size, uint64_t file) {
    return offset <= file && size <= file - offset;
}

int32_t pm_host_check_library(const char *path, char *message, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); // O_NONBLOCK: opening a FIFO must not wait
    if (fd < 0) {
        snprintf(message, size, "cannot open it: %s", strerror(errno));
        return 1;
    }
    struct stat st;
    int bad = 1;
    Elf64_Ehdr eh;
    if (fstat(fd, &st) != 0) {
        snprintf(message, size, "cannot read it: %s", strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        snprintf(message, size, "not a regular file (a FIFO, device or directory): a kernel library is a file");
    } else if (read_at(fd, &eh, sizeof eh, 0) != 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
               eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_type != ET_DYN) {
        snprintf(message, size, "not a kernel library (not a 64-bit ELF shared object%s)",
                 st.st_size < (off_t)sizeof eh ? ": the file is too short" : "");
    } else {
        const uint64_t file = (uint64_t)st.st_size;
        const char *what = NULL; // the first part that the file does not hold
        if (eh.e_phentsize != sizeof(Elf64_Phdr) || !within(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), file))
            what = "its program headers extend";
        for (unsigned i = 0; !what && i < eh.e_phnum; i++) {
            Elf64_Phdr ph;
            if (read_at(fd, &ph, sizeof ph, eh.e_phoff + (uint64_t)i * sizeof ph) != 0) what = "its program headers extend";
            else if (ph.p_type == PT_LOAD && !within(ph.p_offset, ph.p_filesz, file)) what = "a loadable segment extends";
        }
        // Sections outside the segments (symbols, debug information) are not
        // mapped, but a file cut short there is damaged all the same.
        if (!what && eh.e_shnum && (eh.e_shentsize != sizeof(Elf64_Shdr) ||
                                    !within(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), file)))
            what = "its section headers extend";
        for (unsigned i = 0; !what && i < eh.e_shnum; i++) {
            Elf64_Shdr sh;
            if (read_at(fd, &sh, sizeof sh, eh.e_shoff + (uint64_t)i * sizeof sh) != 0) what = "its section headers extend";
            else if (sh.sh_type != SHT_NOBITS && !within(sh.sh_offset, sh.sh_size, file)) what = "a section extends";
        }
        if (what)
            snprintf(message, size, "the file is damaged: %s past its end (%llu bytes; truncated?); build or copy it again",
                     what, (unsigned long long)file);
        else bad = 0;
    }
    close(fd);
    return bad;
}
