-- 0031: the built-in roles of a shop made before issue 41 get the after-sale permissions a
-- new shop's built-in roles start with (shop/permissions.py BUILTIN_ROLES): admin and support
-- editing placed orders, every right on returns and on draft orders. Once, here: a right an
-- operator later withdraws from a built-in role stays withdrawn (as 0013). The owner role
-- gets every permission at each upgrade already. Data only: no table changes.

INSERT INTO role_permissions (role_id, permission)
SELECT r.id, g.permission
FROM roles r
JOIN (
    SELECT 'admin' AS role, 'orders.edit' AS permission
    UNION ALL
    SELECT 'admin', 'returns.read'
    UNION ALL
    SELECT 'admin', 'returns.update'
    UNION ALL
    SELECT 'admin', 'draft_orders.read'
    UNION ALL
    SELECT 'admin', 'draft_orders.create'
    UNION ALL
    SELECT 'admin', 'draft_orders.update'
    UNION ALL
    SELECT 'admin', 'draft_orders.delete'
    UNION ALL
    SELECT 'support', 'orders.edit'
    UNION ALL
    SELECT 'support', 'returns.read'
    UNION ALL
    SELECT 'support', 'returns.update'
    UNION ALL
    SELECT 'support', 'draft_orders.read'
    UNION ALL
    SELECT 'support', 'draft_orders.create'
    UNION ALL
    SELECT 'support', 'draft_orders.update'
    UNION ALL
    SELECT 'support', 'draft_orders.delete'
) g ON g.role = r.name
WHERE r.builtin = 1
ON CONFLICT (role_id, permission) DO NOTHING;
