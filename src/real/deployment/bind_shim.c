/* lockstorm's source-address shim for workers of a Sentinel deployment, LD_PRELOADed
 * into the worker (src/real/deployment/source.rs).
 *
 * Every member of a deployment listens on an IP of its own in 127.77.0.0/16, and its
 * relay tells clients apart by the source IP of their connections, so that a partition
 * can cut one client off one member. lockstorm's own clients bind their sockets before
 * connecting; a worker's library cannot be asked to. This shim does it for them: a
 * connect() of an unbound IPv4 socket to 127.77.x.y first binds the socket to
 * $LOCKSTORM_SOURCE_IP (port 0: the kernel picks one). Every other connect, and a
 * socket the program bound itself, is left alone. If the bind fails the connect goes
 * ahead from the default address, and the relay sees a client it cannot name.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

typedef int (*connect_fn)(int, const struct sockaddr *, socklen_t);

static int to_a_deployment(const struct sockaddr *addr, socklen_t len) {
    if (addr == NULL || len < (socklen_t)sizeof(struct sockaddr_in) || addr->sa_family != AF_INET)
        return 0;
    uint32_t ip = ntohl(((const struct sockaddr_in *)addr)->sin_addr.s_addr);
    return (ip >> 16) == ((127u << 8) | 77u);
}

static void bind_source(int fd) {
    const char *source = getenv("LOCKSTORM_SOURCE_IP");
    struct sockaddr_in mine;
    socklen_t n = sizeof mine;
    if (source == NULL || getsockname(fd, (struct sockaddr *)&mine, &n) != 0)
        return;
    if (mine.sin_family != AF_INET || mine.sin_port != 0 || mine.sin_addr.s_addr != htonl(INADDR_ANY))
        return;
    struct sockaddr_in from;
    memset(&from, 0, sizeof from);
    from.sin_family = AF_INET;
    if (inet_pton(AF_INET, source, &from.sin_addr) == 1)
        (void)bind(fd, (struct sockaddr *)&from, sizeof from);
}

int connect(int fd, const struct sockaddr *addr, socklen_t len) {
    static connect_fn real;
    if (real == NULL)
        real = (connect_fn)dlsym(RTLD_NEXT, "connect");
    if (real == NULL) {
        errno = ENOSYS;
        return -1;
    }
    if (to_a_deployment(addr, len)) {
        int saved = errno;
        bind_source(fd);
        errno = saved;
    }
    return real(fd, addr, len);
}
