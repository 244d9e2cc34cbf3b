import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { sendEnvelope } from '../../../src/http/envelope-reply.js';
import { TextStream, type Envelope } from '../../../src/service/index.js';

/** The reply Fastify would send for an envelope, through the one envelope -> HTTP rule. */
async function reply(envelope: Envelope) {
  const app = Fastify();
  app.get('/', async (_request, r) => sendEnvelope(r, envelope));
  const res = await app.inject({ method: 'GET', url: '/' });
  await app.close();
  return { status: res.statusCode, type: res.headers['content-type'], body: res.body, headers: res.headers };
}

async function* pieces(...texts: string[]): AsyncIterable<string> {
  for (const text of texts) yield text;
}

describe('sendEnvelope', () => {
  it('writes a streamed text as one JSON string when the answer is JSON, escaping across pieces', async () => {
    const res = await reply({ statusCode: 200, body: new TextStream(() => pieces('[("a"', ', \'b\\n\')', '\u2028]')) });
    expect(res.type).toMatch(/^application\/json/);
    expect(JSON.parse(res.body)).toBe('[("a", \'b\\n\')\u2028]');
  });

  it('writes a streamed text as plain text otherwise, and an empty one as ""', async () => {
    expect(await reply({ statusCode: 400, body: new TextStream(() => pieces('bad ', 'name')) })).toMatchObject({ status: 400, type: 'text/plain; charset=utf-8', body: 'bad name' });
    expect((await reply({ statusCode: 200, body: new TextStream(() => pieces()) })).body).toBe('""');
  });

  it('leaves Access-Control-* headers to the CORS policy', async () => {
    const res = await reply({ statusCode: 200, headers: { 'Content-Type': 'application/json', 'Access-Control-Allow-Origin': '*' }, body: 'x' });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.body).toBe('"x"');
  });
});
