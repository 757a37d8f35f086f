// The baseline: an Express 5 hello-world answering every method and path, on PORT.
import express from 'express';

const app = express();
app.use((req, res) => res.send('Hello World!'));
app.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('listening\n'));
