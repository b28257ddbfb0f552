/* MD2 (RFC 1319) test vectors for the interposer's integrity-check code. */
#include "../interposer.c"

static int check(const char *msg, const char *want)
{
    struct md2 m;
    unsigned char out[16];
    char h[33];
    md2_init(&m);
    md2_update(&m, msg, strlen(msg));
    md2_final(&m, out);
    hex(h, out, 16);
    int ok = !strcmp(h, want);
    printf("MD2(\"%s\") = %s %s\n", msg, h, ok ? "ok" : "WRONG");
    return ok;
}

int main(void)
{
    int ok = check("", "8350e5a3e24c153df2275c9f80692773") & check("a", "32ec01ec4a6dac72c0ab96fb34c0b5d1") &
             check("abc", "da853b0d3f88d99b30283a69e6ded6bb") &
             check("message digest", "ab4f496bfb2a530b219ff33031fe06b0") &
             check("12345678901234567890123456789012345678901234567890123456789012345678901234567890",
                   "d5976f79d83d3a0dc9806c3c66f3efd8");
    /* state after the HMAC inner key block (key ^ 0x36): X[0..16) and checksum,
     * as published by ZLUDA's tests of the same computation (dark_api pass2) */
    struct md2 m;
    unsigned char k[16];
    char hx[33], hc[33];
    md2_init(&m);
    for (int i = 0; i < 16; i++)
        k[i] = ic_key[i] ^ 0x36;
    md2_update(&m, k, 16);
    hex(hx, m.x, 16);
    hex(hc, m.c, 16);
    int ok2 = !strcmp(hx, "8b219a49e86d1aeef237f9b54a8c3c75") && !strcmp(hc, "57a110860e60441e705f67d1eb67a13d");
    printf("HMAC inner key state %s %s %s\n", hx, hc, ok2 ? "ok" : "WRONG");
    return ok && ok2 ? 0 : 1;
}
