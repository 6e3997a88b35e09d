/* getaddrinfo(NAME) as a program in an Alpine pod calls it: built with musl-gcc -static by
 * test/real-clients.test.ts, so the lookup goes through musl's own stub resolver (UDP only before
 * musl 1.2.4: a truncated reply is used as it is, never asked again over TCP).
 * Prints one address per line and exits 0, or "error: <gai_strerror>" and exits 2. */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: %s NAME\n", argv[0]);
		return 64;
	}
	struct addrinfo hints, *res;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM; /* one entry per address */
	int rc = getaddrinfo(argv[1], NULL, &hints, &res);
	if (rc != 0) {
		printf("error: %s\n", gai_strerror(rc));
		return 2;
	}
	for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
		char text[INET6_ADDRSTRLEN];
		const void *addr = ai->ai_family == AF_INET
			? (const void *)&((const struct sockaddr_in *)ai->ai_addr)->sin_addr
			: (const void *)&((const struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
		printf("%s\n", inet_ntop(ai->ai_family, addr, text, sizeof text));
	}
	freeaddrinfo(res);
	return 0;
}
