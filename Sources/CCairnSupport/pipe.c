#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>

#include "CCairnSupport.h"

int cairn_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}
