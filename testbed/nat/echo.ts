// A tiny network tool for the NAT test network, run inside namespaces by the
// harness tests. Each command prints one JSON line (serve: "ready" first).
//
//   serve  --port P                     UDP and TCP on P: answers "echo" with the
//                                       source address:port it saw; "reg <me> <peer>"
//                                       is a rendezvous (answers "peer <its address>
//                                       you <yours>", as observed, once both registered)
//   probe  --proto udp|tcp --local-port L --to ip:port [--to …]
//                                       from one inside port to several servers:
//                                       {"seen": ["ip:port", …]} (what each saw)
//   connect --to ip:port [--timeout ms] {"connected": bool, "error"?: …}
//   natpmp --gateway ip --port P        ask the router for a TCP port mapping (NAT-PMP,
//                                       RFC 6886): {"publicIp", "externalPort", "lifetime"}
//   punch  --proto udp|tcp --local-port L --rendezvous ip:port --me A --peer B [--deadline ms]
//                                       learn the peer's mapping from the rendezvous,
//                                       then both send at once (UDP datagrams, or TCP
//                                       simultaneous open from L): {"mapped", "peerMapped",
//                                       "connected", "error"?}
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, createServer } from 'node:net';
import { parseArgs } from 'node:util';

const out = (o: unknown): void => void process.stdout.write(`${JSON.stringify(o)}\n`);

function hostPort(s: string): [string, number] {
  const i = s.lastIndexOf(':');
  const port = Number(s.slice(i + 1));
  if (i < 1 || !Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`not ip:port: ${s}`);
  return [s.slice(0, i), port];
}

type Answer = (text: string) => void;

/** A rendezvous per protocol: registers `me`; answers both sides once `peer` is there too. */
function rendezvous(): (me: string, peer: string, seen: string, answer: Answer) => void {
  const waiting = new Map<string, { seen: string; answer: Answer }>();
  return (me, peer, seen, answer) => {
    waiting.set(me, { seen, answer });
    const other = waiting.get(peer);
    if (other === undefined) return;
    waiting.delete(me);
    waiting.delete(peer);
    answer(`peer ${other.seen} you ${seen}`);
    other.answer(`peer ${seen} you ${other.seen}`);
  };
}

function serve(port: number): void {
  const udpRegister = rendezvous();
  const tcpRegister = rendezvous();
  const udp = createSocket('udp4');
  udp.on('message', (msg, rinfo) => {
    const seen = `${rinfo.address}:${rinfo.port}`;
    const [verb, me, peer] = msg.toString().split(' ');
    const reply = (s: string): void => udp.send(s, rinfo.port, rinfo.address);
    if (verb === 'echo') reply(seen);
    else if (verb === 'reg' && me !== undefined && peer !== undefined) udpRegister(me, peer, seen, reply);
  });
  const tcp = createServer((sock) => {
    const seen = `${sock.remoteAddress!.replace(/^::ffff:/, '')}:${sock.remotePort!}`;
    sock.on('error', () => undefined);
    sock.once('data', (d) => {
      const [verb, me, peer] = d.toString().trim().split(' ');
      // The server closes first: the client's fixed port is not left in TIME_WAIT.
      if (verb === 'echo') sock.end(seen);
      else if (verb === 'reg' && me !== undefined && peer !== undefined) tcpRegister(me, peer, seen, (a) => sock.end(a));
      else sock.destroy();
    });
  });
  let ready = 0;
  const up = (): void => {
    if (++ready === 2) out({ ready: port });
  };
  udp.bind(port, up);
  tcp.listen(port, up);
}

/** Sends `msg` from `sock` every 200 ms until an answer comes. */
function udpAsk(sock: UdpSocket, to: string, msg: string): Promise<string> {
  const [h, p] = hostPort(to);
  return new Promise((done) => {
    const timer = setInterval(() => sock.send(msg, p, h), 200);
    sock.send(msg, p, h);
    const onMsg = (m: Buffer, r: { address: string; port: number }): void => {
      if (r.address !== h || r.port !== p) return;
      clearInterval(timer);
      sock.off('message', onMsg);
      done(m.toString());
    };
    sock.on('message', onMsg);
  });
}

/** One TCP exchange from `localPort`; resolves with what the server wrote once it has closed. */
function tcpAsk(to: string, localPort: number, msg: string): Promise<string> {
  const [host, port] = hostPort(to);
  return new Promise((done, fail) => {
    let got = '';
    const s = connect({ host, port, localPort }, () => s.write(`${msg}\n`));
    s.on('data', (d) => (got += d.toString()));
    s.on('error', fail);
    s.on('close', () => done(got));
  });
}

async function probe(proto: string, localPort: number, to: string[]): Promise<void> {
  const seen: string[] = [];
  if (proto === 'udp') {
    const sock = createSocket('udp4');
    await new Promise<void>((r) => sock.bind(localPort, r));
    for (const t of to) seen.push(await udpAsk(sock, t, 'echo'));
    sock.close();
  } else {
    for (const t of to) seen.push(await tcpAsk(t, localPort, 'echo'));
  }
  out({ seen });
}

function tryConnect(to: string, timeoutMs: number): Promise<void> {
  const [host, port] = hostPort(to);
  return new Promise((done) => {
    const s = connect({ host, port });
    const finish = (o: { connected: boolean; error?: string }): void => {
      clearTimeout(timer);
      s.destroy();
      out(o);
      done();
    };
    const timer = setTimeout(() => finish({ connected: false, error: `no connection within ${timeoutMs} ms` }), timeoutMs);
    s.on('connect', () => finish({ connected: true }));
    s.on('error', (e) => finish({ connected: false, error: e.message }));
  });
}

async function punch(proto: string, localPort: number, rendezvous: string, me: string, peer: string, deadlineMs: number): Promise<void> {
  const result = { mapped: '', peerMapped: '', connected: false } as { mapped: string; peerMapped: string; connected: boolean; error?: string };
  const reg = `reg ${me} ${peer}`;
  // The punch itself is bounded by the deadline; this bounds waiting for a peer that never registers.
  setTimeout(() => {
    process.stderr.write(`echo: ${peer} did not register at ${rendezvous} within ${2 * deadlineMs} ms\n`);
    process.exit(3);
  }, 2 * deadlineMs).unref();
  /** "peer <ip:port> you <ip:port>" from the rendezvous. */
  const learn = (answer: string): void => {
    [, result.peerMapped = '', , result.mapped = ''] = answer.split(' ');
  };
  if (proto === 'udp') {
    const sock = createSocket('udp4');
    await new Promise<void>((r) => sock.bind(localPort, r));
    learn(await udpAsk(sock, rendezvous, reg));
    const [h, p] = hostPort(result.peerMapped);
    await new Promise<void>((done) => {
      let lingering = false;
      const timer = setInterval(() => sock.send(`punch from ${me}`, p, h), 100);
      const end = setTimeout(finish, deadlineMs);
      function finish(): void {
        clearInterval(timer);
        clearTimeout(end);
        done();
      }
      sock.on('message', (m, r) => {
        if (r.address !== h || r.port !== p || !m.toString().startsWith('punch') || lingering) return;
        result.connected = true;
        // Keep sending a little longer so the peer hears us too.
        lingering = true;
        setTimeout(finish, 1500);
      });
    });
    sock.close();
  } else {
    learn(await tcpAsk(rendezvous, localPort, reg));
    const [host, port] = hostPort(result.peerMapped);
    await new Promise<void>((done) => {
      // One connect from the same inside port: the kernel retransmits the SYN,
      // and the peer's SYN crossing ours makes a simultaneous open.
      const s = connect({ host, port, localPort });
      const timer = setTimeout(() => {
        result.error = `no connection within ${deadlineMs} ms`;
        s.destroy();
        done();
      }, deadlineMs);
      s.on('connect', () => s.write(`hello from ${me}\n`));
      s.on('data', (d) => {
        if (!d.toString().startsWith('hello from')) return;
        result.connected = true;
        clearTimeout(timer);
        // Let our hello reach the peer before we go.
        setTimeout(() => {
          s.destroy();
          done();
        }, 1000);
      });
      s.on('error', (e) => {
        result.error = e.message;
        clearTimeout(timer);
        done();
      });
    });
  }
  out(result);
}

/** One NAT-PMP request/response over UDP to the gateway's port 5351, retried as the RFC says (250 ms, doubling). */
async function natpmpAsk(sock: UdpSocket, gateway: string, req: Buffer): Promise<Buffer> {
  for (let wait = 250; wait <= 4000; wait *= 2) {
    sock.send(req, 5351, gateway);
    const res = await new Promise<Buffer | undefined>((done) => {
      const t = setTimeout(() => done(undefined), wait);
      sock.once('message', (m) => {
        clearTimeout(t);
        done(m);
      });
    });
    if (res !== undefined) return res;
  }
  throw new Error(`no NAT-PMP answer from ${gateway}`);
}

async function natpmp(gateway: string, port: number): Promise<void> {
  const sock = createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, r));
  const addr = await natpmpAsk(sock, gateway, Buffer.from([0, 0]));
  if (addr.readUInt16BE(2) !== 0) throw new Error(`NAT-PMP public address request failed: result ${addr.readUInt16BE(2)}`);
  const req = Buffer.alloc(12);
  req.writeUInt8(2, 1); // map TCP
  req.writeUInt16BE(port, 4);
  req.writeUInt16BE(port, 6); // suggested external port
  req.writeUInt32BE(3600, 8);
  const map = await natpmpAsk(sock, gateway, req);
  if (map.readUInt16BE(2) !== 0) throw new Error(`NAT-PMP mapping request failed: result ${map.readUInt16BE(2)}`);
  sock.close();
  out({ publicIp: [...addr.subarray(8, 12)].join('.'), externalPort: map.readUInt16BE(10), lifetime: map.readUInt32BE(12) });
}

async function main(): Promise<void> {
  const [cmd, ...rest] = process.argv.slice(2);
  const { values: v } = parseArgs({
    args: rest,
    options: {
      port: { type: 'string' },
      proto: { type: 'string', default: 'udp' },
      'local-port': { type: 'string' },
      to: { type: 'string', multiple: true, default: [] },
      timeout: { type: 'string', default: '3000' },
      rendezvous: { type: 'string' },
      me: { type: 'string' },
      peer: { type: 'string' },
      deadline: { type: 'string', default: '8000' },
      gateway: { type: 'string' },
    },
  });
  const num = (s: string | undefined, what: string): number => {
    const n = Number(s);
    if (s === undefined || !Number.isInteger(n) || n < 0) throw new Error(`${what} must be a non-negative integer`);
    return n;
  };
  if (v.proto !== 'udp' && v.proto !== 'tcp') throw new Error('--proto is udp or tcp');
  switch (cmd) {
    case 'serve':
      return serve(num(v.port, '--port'));
    case 'probe':
      return probe(v.proto, num(v['local-port'], '--local-port'), v.to);
    case 'connect':
      return tryConnect(v.to[0] ?? '', num(v.timeout, '--timeout'));
    case 'natpmp':
      return natpmp(v.gateway ?? '', num(v.port, '--port'));
    case 'punch':
      return punch(v.proto, num(v['local-port'], '--local-port'), v.rendezvous ?? '', v.me ?? 'a', v.peer ?? 'b', num(v.deadline, '--deadline'));
    default:
      throw new Error('usage: echo.ts serve|probe|connect|natpmp|punch … (see the head of testbed/nat/echo.ts)');
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`echo: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
});
