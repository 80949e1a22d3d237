import { LIMITS } from '../../lib/constants';
import { field } from '../validation';

/** Shared with the dashboard's notification-recipients form. */
export const notificationRecipientRules = () => [
  field('email_address').required().email(),
  // The reference's one odd message: 'The name field is required' without a period.
  field('email_owner').required('The name field is required').string().maxLength(LIMITS.string),
];
