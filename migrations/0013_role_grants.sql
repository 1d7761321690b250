-- 0013: the built-in roles of a shop made before issues 26 and 27 get the pricing and refund
-- permissions that a new shop's built-in roles start with (shop/auth/permissions.py
-- BUILTIN_ROLES): admin all of shipping, tax and discounts and orders.refund; editor
-- discounts; support their reads and orders.refund. Once, here: a right an
-- operator later withdraws from a built-in role stays withdrawn. The owner role gets every
-- permission at each upgrade already (seed_builtin_roles). Data only: no table changes.

INSERT INTO role_permissions (role_id, permission)
SELECT r.id, g.permission
FROM roles r
JOIN (
    SELECT 'admin' AS role, 'orders.refund' AS permission
    UNION ALL
    SELECT 'support', 'orders.refund'
    UNION ALL
    SELECT 'admin', 'shipping.read'
    UNION ALL
    SELECT 'admin' AS role, 'shipping.create' AS permission
    UNION ALL
    SELECT 'admin' AS role, 'shipping.update' AS permission
    UNION ALL
    SELECT 'admin' AS role, 'shipping.delete' AS permission
    UNION ALL
    SELECT 'admin' AS role, 'tax.read' AS permission
    UNION ALL
    SELECT 'admin' AS role, 'tax.create' AS permission
    UNION ALL
    SELECT 'admin' AS role, 'tax.update' AS permission
    UNION ALL
    SELECT 'admin' AS role, 'tax.delete' AS permission
    UNION ALL
    SELECT 'admin' AS role, 'discounts.read' AS permission
    UNION ALL
    SELECT 'admin' AS role, 'discounts.create' AS permission
    UNION ALL
    SELECT 'admin' AS role, 'discounts.update' AS permission
    UNION ALL
    SELECT 'admin' AS role, 'discounts.delete' AS permission
    UNION ALL
    SELECT 'editor' AS role, 'discounts.read' AS permission
    UNION ALL
    SELECT 'editor' AS role, 'discounts.create' AS permission
    UNION ALL
    SELECT 'editor' AS role, 'discounts.update' AS permission
    UNION ALL
    SELECT 'editor' AS role, 'discounts.delete' AS permission
    UNION ALL
    SELECT 'support' AS role, 'shipping.read' AS permission
    UNION ALL
    SELECT 'support' AS role, 'tax.read' AS permission
    UNION ALL
    SELECT 'support' AS role, 'discounts.read' AS permission
) g ON g.role = r.name
WHERE r.builtin = 1
ON CONFLICT (role_id, permission) DO NOTHING;
