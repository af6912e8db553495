# Model of a forward grid's finish time (tile-time units, every key tile
# equal): the sectioned order run by the hardware's block scheduler
# (dynamic: the next block to the first free SM) against static orders of
# a persistent grid (round robin, snake). bench/NOTES.md, twenty-fourth.
import heapq,sys
def items(tiles,pairs,causal=True,sec=8):
    out=[]
    for lin in range(tiles*pairs):
        sb=sec*tiles; fp=(lin//sb)*sec; w=min(sec,pairs-fp); ins=lin%sb
        t=ins//w
        if causal: t=tiles-1-t
        out.append(t+1 if causal else tiles)
    return out
def static(it,G,ovh=0):
    s=[0]*G
    for i,x in enumerate(it): s[i%G]+=x+ovh
    return max(s)
def dynamic(it,G,ovh=0):
    h=[0]*G
    for x in it:
        t=heapq.heappop(h); heapq.heappush(h,t+x+ovh)
    return max(h)
for name,tiles,pairs,G in [("c128 2x16x4k",32,32,132),("c64 4x32x4k (192 rows)",22,128,132),("c128 8k 2x16",64,32,132),("c128 1k 16x16",8,256,132),("gqa 2x32 4k",32,64,132)]:
    it=items(tiles,pairs)
    ideal=sum(it)/G
    for ovh in (0,1):
        print(name,"ovh",ovh,"ideal %.1f static %d dynamic %d  static/dyn %.3f"%(ideal+ovh*len(it)/G,static(it,G,ovh),dynamic(it,G,ovh),static(it,G,ovh)/dynamic(it,G,ovh)))
print("snake")
def snake(it,G,ovh=0):
    s=[0]*G
    for i,x in enumerate(it):
        r,c=divmod(i,G); s[c if r%2==0 else G-1-c]+=x+ovh
    return max(s)
for name,tiles,pairs,G in [("c128 2x16x4k",32,32,132),("c64 4x32x4k (192 rows)",22,128,132),("c128 8k 2x16",64,32,132),("c128 1k 16x16",8,256,132),("gqa 2x32 4k",32,64,132),("c128 16k 1x16",128,16,132)]:
    it=items(tiles,pairs); srt=sorted(it,reverse=True)
    d=dynamic(it,G,1)
    print(name,"dyn %d snake-sectioned %.3f snake-sorted %.3f"%(d,snake(it,G,1)/d,snake(srt,G,1)/d))
