// The baseline under Express: a node:http hello-world answering every method and path, on PORT.
import http from 'node:http';

http
  .createServer((req, res) => {
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end('Hello World!');
  })
  .listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('listening\n'));
