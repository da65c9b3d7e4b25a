// The ceiling: a bare node:http server answering a small JSON body. Every figure is reported
// relative to what this process does on the same machine with the same load settings.
import http from 'node:http';

const body = JSON.stringify({ status: 'ok', service: 'baseline', items: [1, 2, 3] });

const server = http.createServer((_request, response) => {
  response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  response.end(body);
});
server.keepAliveTimeout = 72_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');

process.once('SIGTERM', () => server.close(() => process.exit(0)));
process.once('SIGINT', () => server.close(() => process.exit(0)));
