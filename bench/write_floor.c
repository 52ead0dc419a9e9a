/* The least a session revert's writes can cost on this filesystem, without staged (issue 34):
 * FILES files named fNNN.ts in DIR rewritten with 60 lines each, in one of three ways.
 *   0  the journal's protocol: a temp file beside each (O_CREAT|O_EXCL, write, fsync) on 16
 *      threads, the folder fsynced, the temps renamed over the files on 16 threads, the folder
 *      fsynced (crates/journal/src/journal/commit.rs, without the journal file, the log record
 *      and the checks)
 *   1  the same without any fsync
 *   2  git apply's way: each file unlinked, created and written, on one thread, no sync
 * Prints the wall and CPU time of the writes. Built and run by bench/write_floor.py. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int n, mode, dfd;
static atomic_int next;
static char data[4096];
static size_t len;

static void *temps(void *unused) {
    (void)unused;
    char t[64];
    for (int i; (i = atomic_fetch_add(&next, 1)) < n;) {
        snprintf(t, sizeof t, ".f%03d.ts.tmp", i);
        int fd = openat(dfd, t, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, data, len) != (ssize_t)len || (mode == 0 && fsync(fd))) {
            perror(t);
            exit(1);
        }
        close(fd);
    }
    return 0;
}

static void *renames(void *unused) {
    (void)unused;
    char t[64], f[64];
    for (int i; (i = atomic_fetch_add(&next, 1)) < n;) {
        snprintf(t, sizeof t, ".f%03d.ts.tmp", i);
        snprintf(f, sizeof f, "f%03d.ts", i);
        if (renameat(dfd, t, dfd, f)) {
            perror(f);
            exit(1);
        }
    }
    return 0;
}

static void on_16(void *(*work)(void *)) {
    pthread_t th[16];
    atomic_store(&next, 0);
    for (int k = 0; k < 16; k++) pthread_create(&th[k], 0, work, 0);
    for (int k = 0; k < 16; k++) pthread_join(th[k], 0);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: write_floor DIR FILES MODE\n");
        return 2;
    }
    n = atoi(argv[2]);
    mode = atoi(argv[3]);
    for (int line = 0; line < 60; line++)
        len += (size_t)snprintf(data + len, sizeof data - len, "const v0_%d = %d;\n", line, line);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    dfd = open(argv[1], O_RDONLY | O_DIRECTORY);
    if (dfd < 0) {
        perror(argv[1]);
        return 1;
    }
    if (mode == 2) {
        char f[64];
        for (int i = 0; i < n; i++) {
            snprintf(f, sizeof f, "f%03d.ts", i);
            unlinkat(dfd, f, 0);
            int fd = openat(dfd, f, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
            if (fd < 0 || write(fd, data, len) != (ssize_t)len) {
                perror(f);
                return 1;
            }
            close(fd);
        }
    } else {
        on_16(temps);
        if (mode == 0) fsync(dfd);
        on_16(renames);
        if (mode == 0) fsync(dfd);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    printf("%.3f %.3f\n", (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6,
           (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3);
    return 0;
}
