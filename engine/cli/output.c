/* Output files that are never left half-written, and the interrupt signals.
 *
 * Every file a subcommand writes goes through gy_cli_output: it is created under a temporary name
 * in the same directory (so the final rename stays on one file system and is atomic) and renamed
 * over the real name only once it is complete. A command that fails before then removes the
 * temporary, so an older file of that name survives untouched, and a reader never sees a
 * truncated one.
 *
 * SIGINT and SIGTERM only set a flag (the one thing a handler may safely do); the loops of `run`
 * and `soak` poll it once per frame and end the run early, writing complete files. The handler is
 * installed with SA_RESETHAND, so a second signal during the wrap-up ends the process at once. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* The signal caught (0: none). A signal handler can reach nothing but a static. */
static volatile sig_atomic_t g_caught;

static void on_signal(int sig)
{
    g_caught = sig;
}

void gy_cli_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND; /* no SA_RESTART: a paced sleep returns at once */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int gy_cli_signal_caught(void)
{
    return (int)g_caught;
}

int gy_cli_interrupted_exit(void)
{
    return 128 + (int)g_caught;
}

bool gy_cli_output_open(gy_cli_output *o, const char *path, const char *who, const char *flag)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    o->who = who;
    if (strcmp(path, "-") == 0) {
        o->f = stdout;
        return true;
    }
    size_t n = strlen(path) + sizeof ".tmp-XXXXXX";
    o->tmp = malloc(n);
    if (o->tmp == NULL) {
        fprintf(stderr, "%s: %s %s: out of memory\n", who, flag, path);
        return false;
    }
    snprintf(o->tmp, n, "%s.tmp-XXXXXX", path);
    int fd = mkstemp(o->tmp);
    if (fd >= 0) {
        /* mkstemp creates 0600; the finished file gets the mode a plain fopen would give it. */
        mode_t mask = umask(0);
        umask(mask);
        if (fchmod(fd, 0666 & ~mask) == 0)
            o->f = fdopen(fd, "w");
    }
    if (o->f == NULL) {
        fprintf(stderr, "%s: %s %s: cannot write: %s\n", who, flag, path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(o->tmp);
        }
        free(o->tmp);
        o->tmp = NULL;
        return false;
    }
    return true;
}

int gy_cli_output_commit(gy_cli_output *o)
{
    if (o->f == NULL)
        return 0;
    int bad = ferror(o->f);
    if (o->f == stdout) {
        bad |= fflush(o->f);
    } else {
        bad |= fflush(o->f);
        bad |= fsync(fileno(o->f));
        bad |= fclose(o->f);
        if (bad == 0 && rename(o->tmp, o->path) != 0)
            bad = 1;
        if (bad != 0)
            unlink(o->tmp);
        free(o->tmp);
        o->tmp = NULL;
    }
    o->f = NULL;
    if (bad != 0) {
        fprintf(stderr, "%s: writing %s failed: %s\n", o->who, o->path, strerror(errno));
        return 1;
    }
    return 0;
}

void gy_cli_output_discard(gy_cli_output *o)
{
    if (o->f == NULL)
        return;
    if (o->f == stdout) {
        fflush(stdout);
    } else {
        fclose(o->f);
        unlink(o->tmp);
        free(o->tmp);
        o->tmp = NULL;
    }
    o->f = NULL;
}
