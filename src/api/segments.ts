import { sendSuccess, sendSuccessUnderErrors } from '../lib/envelope';
import { toId } from '../lib/http';
import { field, validate } from '../http/validation';
import type { Services } from '../services';
import { deleteById } from './crud';
import { lists, ref, says, saysUnderErrors } from './describe';
import { ApiRoutes } from './routes';
import { ctxOf } from '../http/context';
import { listMessage, PAGING_PARAMS, pagingOf } from '../http/paging';
import { sendStreamedList } from './stream-list';
import { recipientRules, SEGMENT_CONDITION_PARAMS, segmentInput, segmentRules } from '../http/inputs/segments';

export function mountSegments(routes: ApiRoutes, { segments }: Services): void {
  routes.get('/segment/list', { summary: 'List segments', response: lists('segments', ref('Segment')), params: PAGING_PARAMS }, async (req, res) => {
    sendSuccess(res, listMessage('segments', await segments.list(ctxOf(req), pagingOf(req))));
  });

  routes.post('/segment/save', { summary: 'Create a segment (extension)', response: says('Saved Successfully'), params: SEGMENT_CONDITION_PARAMS }, validate(...segmentRules()), async (req, res) => {
    await segments.save(ctxOf(req), segmentInput(req));
    sendSuccess(res, 'Saved Successfully');
  });

  routes.post('/segment/update', { summary: 'Change a segment (extension)', response: says('Updated Successfully'), params: SEGMENT_CONDITION_PARAMS }, validate(field('segment_id', 'query').required().integer(), ...segmentRules()), async (req, res) => {
    await segments.update(ctxOf(req), toId(req.query.segment_id) ?? 0, segmentInput(req));
    sendSuccess(res, 'Updated Successfully');
  });

  routes.delete('/segment/delete', { summary: 'Delete a segment', response: saysUnderErrors('Deleted Successfully') }, validate(field('segment_id', 'query').required().integer()), async (req, res) => {
    await segments.remove(ctxOf(req), toId(req.query.segment_id) ?? 0);
    sendSuccessUnderErrors(res, 'Deleted Successfully');
  });

  routes.get('/segment/email/list', { summary: 'List the recipients of a segment', response: lists('contactEmails', ref('SegmentRecipient')), params: PAGING_PARAMS }, validate(field('segment_id', 'query').required().integer()), async (req, res) => {
    const segmentId = toId(req.query.segment_id) ?? 0;
    const paging = pagingOf(req);
    if (paging) return sendSuccess(res, listMessage('contactEmails', await segments.recipientsPage(ctxOf(req), segmentId, paging)));
    await sendStreamedList(res, 'contactEmails', segments.recipientChunks(ctxOf(req), segmentId));
  });

  routes.post(
    '/segment/email/store',
    { summary: 'Add a recipient to a segment by hand', response: says('Added Successfully') },
    validate(field('segment_id').required().integer(), ...recipientRules()),
    async (req, res) => {
      const { segment_id: segmentId, first_name: firstName, last_name: lastName, email } = req.body as Record<string, unknown>;
      await segments.storeRecipient(ctxOf(req), { segment_id: toId(segmentId) ?? 0, first_name: String(firstName), last_name: String(lastName), email: String(email) });
      sendSuccess(res, 'Added Successfully');
    },
  );

  deleteById(routes, '/segment/email/delete', 'segment_recipient_id', segments.removeRecipients, 'Remove a recipient from a segment');
}
