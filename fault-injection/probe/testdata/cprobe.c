/* cprobe: the goprobe steps in C, built with `gcc -static` by
 * fault-injection/probe/tests/seccomp.rs (a static binary: libvxfault.so never loads
 * into it). One JSON line per step: {"pid":…,"step":…,"ret":…,"errno":…}. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char names[32][256];
static int fds[32];
static int nfiles;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static int *slot(const char *name) {
    for (int i = 0; i < nfiles; i++)
        if (strcmp(names[i], name) == 0) return &fds[i];
    if (nfiles == 32) exit(3);
    snprintf(names[nfiles], sizeof names[nfiles], "%s", name);
    fds[nfiles] = -1;
    return &fds[nfiles++];
}

static void report(const char *step, long ret, int err) {
    pthread_mutex_lock(&mu);
    printf("{\"pid\":%d,\"step\":\"%s\",\"ret\":%ld,\"errno\":%d}\n", getpid(), step, ret, err);
    fflush(stdout);
    pthread_mutex_unlock(&mu);
}

static void done(const char *step, long r) { report(step, r, r < 0 ? errno : 0); }

struct job { int i, k; };

static void *writer(void *p) {
    struct job *j = p;
    char name[16], line[16], step[64];
    snprintf(name, sizeof name, "w%d", j->i);
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (int n = 0; n < j->k && fd >= 0; n++) {
        snprintf(line, sizeof line, "%d:%05d\n", j->i, n);
        if (write(fd, line, 8) < 0) {
            snprintf(step, sizeof step, "writers:write:%d:%d", j->i, n + 1);
            report(step, -1, errno);
        }
    }
    close(fd);
    return NULL;
}

int main(int argc, char **argv) {
    for (int a = 1; a < argc; a++) {
        char buf[512];
        snprintf(buf, sizeof buf, "%s", argv[a]);
        const char *step = argv[a];
        char *op = strtok(buf, ":"), *x = strtok(NULL, ":"), *y = strtok(NULL, "");
        if (!op) continue;
        if (!strcmp(op, "create")) {
            int fd = open(x, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            *slot(x) = fd;
            done(step, fd);
        } else if (!strcmp(op, "write")) {
            done(step, write(*slot(x), y ? y : "", y ? strlen(y) : 0));
        } else if (!strcmp(op, "fsync")) {
            done(step, fsync(*slot(x)));
        } else if (!strcmp(op, "close")) {
            done(step, close(*slot(x)));
        } else if (!strcmp(op, "fsyncdir")) {
            int d = open(x, O_RDONLY | O_DIRECTORY);
            long r = d < 0 ? -1 : fsync(d);
            int e = errno;
            if (d >= 0) close(d);
            report(step, r, r < 0 ? e : 0);
        } else if (!strcmp(op, "rename")) {
            done(step, rename(x, y));
        } else if (!strcmp(op, "unlink")) {
            done(step, unlink(x));
        } else if (!strcmp(op, "mkdir")) {
            done(step, mkdir(x, 0755));
        } else if (!strcmp(op, "rmdir")) {
            done(step, rmdir(x));
        } else if (!strcmp(op, "link")) {
            done(step, link(x, y));
        } else if (!strcmp(op, "symlink")) {
            done(step, symlink(x, y));
        } else if (!strcmp(op, "flock")) {
            int fd = open(x, O_RDWR | O_CREAT, 0644);
            *slot(x) = fd;
            done(step, fd < 0 ? -1 : flock(fd, LOCK_EX | LOCK_NB));
        } else if (!strcmp(op, "truncate")) {
            done(step, ftruncate(*slot(x), atol(y)));
        } else if (!strcmp(op, "sleep")) {
            struct timespec t = {atoi(x) / 1000, (atoi(x) % 1000) * 1000000L};
            nanosleep(&t, NULL);
            report(step, 0, 0);
        } else if (!strcmp(op, "writers")) {
            int n = atoi(x), k = atoi(y);
            pthread_t t[16];
            struct job jobs[16];
            for (int i = 0; i < n && i < 16; i++) {
                jobs[i] = (struct job){i, k};
                pthread_create(&t[i], NULL, writer, &jobs[i]);
            }
            for (int i = 0; i < n && i < 16; i++) pthread_join(t[i], NULL);
            report("writers:done", 0, 0);
        } else {
            fprintf(stderr, "cprobe: unknown step %s\n", step);
            return 2;
        }
    }
    return 0;
}
