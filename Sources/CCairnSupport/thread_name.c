#define _GNU_SOURCE
#include <pthread.h>
#include "CCairnSupport.h"

void cairn_name_current_thread(const char *name) {
    char clipped[16];
    size_t index = 0;
    for (; name[index] != 0 && index < sizeof clipped - 1; index++) clipped[index] = name[index];
    clipped[index] = 0;
    pthread_setname_np(pthread_self(), clipped);
}

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

int cairn_lower_current_thread_priority(int nice) {
    // On Linux, PRIO_PROCESS with a thread ID sets that thread's nice value alone.
    pid_t thread = (pid_t)syscall(SYS_gettid);
    return setpriority(PRIO_PROCESS, (id_t)thread, nice);
}
