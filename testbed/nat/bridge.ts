// A Unix-socket door into a namespace: listens on a socket path (Unix sockets
// live in the file system, not in a network namespace) and forwards each
// connection to host:port inside the namespace it runs in. The test process,
// outside every namespace, reaches a service inside (the manager's HTTP API on
// its loopback) without giving the machine's own namespace a route into the
// test network.
//
//   bridge.ts <socket path> <port> [host]      prints {"bridge": <socket path>} when listening
import { connect, createServer } from 'node:net';
import { rmSync } from 'node:fs';

const [path, portArg, host = '127.0.0.1'] = process.argv.slice(2);
const port = Number(portArg);
if (path === undefined || !Number.isInteger(port) || port < 1 || port > 65535) {
  process.stderr.write('usage: bridge.ts <socket path> <port> [host]\n');
  process.exit(2);
}
rmSync(path, { force: true });
const server = createServer((client) => {
  const upstream = connect({ host, port });
  client.pipe(upstream).pipe(client);
  const close = (): void => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close);
  upstream.on('error', close);
});
server.listen(path, () => process.stdout.write(`${JSON.stringify({ bridge: path })}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
