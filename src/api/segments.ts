import { sendSuccess, sendSuccessUnderErrors } from '../lib/envelope';
import { toId } from '../lib/http';
import { field, validate } from '../http/validation';
import type { Services } from '../services';
import { deleteById } from './crud';
import { ApiRoutes } from './routes';
import { ctxOf } from '../http/context';
import { listMessage, pagingOf } from '../http/paging';
import { sendStreamedList } from './stream-list';
import { recipientRules, segmentInput, segmentRules } from '../http/inputs/segments';

export function mountSegments(routes: ApiRoutes, { segments }: Services): void {
  routes.get('/segment/list', async (req, res) => {
    sendSuccess(res, listMessage('segments', await segments.list(ctxOf(req), pagingOf(req))));
  });

  routes.post('/segment/save', validate(...segmentRules()), async (req, res) => {
    await segments.save(ctxOf(req), segmentInput(req));
    sendSuccess(res, 'Saved Successfully');
  });

  routes.post('/segment/update', validate(field('segment_id', 'query').required().integer(), ...segmentRules()), async (req, res) => {
    await segments.update(ctxOf(req), toId(req.query.segment_id) ?? 0, segmentInput(req));
    sendSuccess(res, 'Updated Successfully');
  });

  routes.delete('/segment/delete', validate(field('segment_id', 'query').required().integer()), async (req, res) => {
    await segments.remove(ctxOf(req), toId(req.query.segment_id) ?? 0);
    sendSuccessUnderErrors(res, 'Deleted Successfully');
  });

  routes.get('/segment/email/list', validate(field('segment_id', 'query').required().integer()), async (req, res) => {
    const segmentId = toId(req.query.segment_id) ?? 0;
    const paging = pagingOf(req);
    if (paging) return sendSuccess(res, listMessage('contactEmails', await segments.recipientsPage(ctxOf(req), segmentId, paging)));
    await sendStreamedList(res, 'contactEmails', segments.recipientChunks(ctxOf(req), segmentId));
  });

  routes.post(
    '/segment/email/store',
    validate(field('segment_id').required().integer(), ...recipientRules()),
    async (req, res) => {
      const { segment_id: segmentId, first_name: firstName, last_name: lastName, email } = req.body as Record<string, unknown>;
      await segments.storeRecipient(ctxOf(req), { segment_id: toId(segmentId) ?? 0, first_name: String(firstName), last_name: String(lastName), email: String(email) });
      sendSuccess(res, 'Added Successfully');
    },
  );

  deleteById(routes, '/segment/email/delete', 'segment_recipient_id', segments.removeRecipients);
}
