-- Issue 40: a message of the mail outbox may carry an attachment, named by reference
-- (`invoice:<order id>`) and drawn when it is sent (shop/mail: ATTACHMENTS): the invoice's
-- PDF is made from its frozen snapshot, so the outbox keeps no copy of it.
ALTER TABLE mail_outbox ADD COLUMN attachment TEXT;
