import { sendSuccess } from '../lib/envelope';
import { validate } from '../http/validation';
import type { Services } from '../services';
import { utrOf } from '../http/campaign-params';
import { ctxOf } from '../http/context';
import { abTestInput, chooseFields, validateAbTest, variantOf } from '../http/inputs/ab-tests';
import { says } from './describe';
import { ApiRoutes } from './routes';

/** Extensions: a single send's A/B test, saved before it starts, and the winner chosen by hand. */
export function mountAbTests(routes: ApiRoutes, { abTests }: Services): void {
  routes.post('/single/send/ab/save', {
    summary: 'Save the A/B test of a draft or ready single send (extension)',
    description: 'Replaces any test the send had. When the send starts, a random `test_percent` of its recipients receives the variants, split evenly; after `wait_minutes` the variant with the best rate of `winner_metric` goes to the rest. `ab` in the send\'s details shows its progress.',
    response: says('Saved Successfully'),
  }, validateAbTest(), async (req, res) => {
    await abTests.save(ctxOf(req), utrOf(req), abTestInput(req.body));
    sendSuccess(res, 'Saved Successfully');
  });

  routes.get('/single/send/ab/choose', {
    effect: 'changes',
    summary: 'Send a chosen A/B test variant to the rest of the audience at once (extension)',
    description: 'Only while the test is running (its `ab.status` is `testing`) and its send is sending; a 409 otherwise.',
    response: says('Winner Sent'),
  }, validate(...chooseFields()), async (req, res) => {
    await abTests.choose(ctxOf(req), utrOf(req), variantOf(req));
    sendSuccess(res, 'Winner Sent');
  });
}
