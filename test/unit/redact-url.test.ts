import { expect, it } from 'vitest';
import { redactUrl } from '../../src/redact-url.js';

it('masks the events token in a logged URL, as it masks signatures', () => {
  expect(redactUrl('/events/s3?token=s3cret&x=1')).toBe('/events/s3?token=[redacted]&x=1');
  expect(redactUrl('/events/s3?%74oken=s3cret')).toBe('/events/s3?%74oken=[redacted]');
  expect(redactUrl('/store/a?X-Amz-Signature=abc')).toBe('/store/a?X-Amz-Signature=[redacted]');
  expect(redactUrl('/query?instrument=swe')).toBe('/query?instrument=swe');
});
